#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""GTKWave translate filter process: shows bf16 and fp32 bit patterns as decimal numbers.

GTKWave starts the filter once and, for every value it draws, writes the value as the trace
formats it (binary in our save files: "0011111110000000") plus a newline to the filter's stdin,
then reads one line back and draws that instead. A save file attaches the filter to the traces
that follow a line "^>1 <path to this script> [--format=...]" and marks each such trace with the
flag 0x4000 (TR_PTRANSLATED) in its "@" line; "^>0" stops attaching it.

Decoding is exact, by bit manipulation: sign, exponent and mantissa fields are cut from the word
and the value is built as an exact Decimal. The decimal printed is the shortest one that reads
back, rounded to nearest-even in the same format, to the same bits, so two different encodings
never print alike (of two as short, the nearer). It is shown plainly between 1e-4 and 1e9 unless
that would make up trailing zeros (65536 in bf16 prints 6.55e+04: 65500 reads back to it), else as
d.ddde+x; a plain integer is therefore the exact value. Special values: "inf", "-inf", "nan" (the canonical quiet
NaN) or "nan(0x7FC1)" (any other, with its bits), "-0", and subnormals end in " sub". Values with
x or z bits print "x" or "z".

Widths: 16 bits is bf16, 32 bits is fp32. --format=bf16 or --format=fp32 splits a wider bus into
lanes of that format, printed most significant lane first, separated by " | ". Anything else is
passed back unchanged.

Usage: in a save file (see docs/waves.md), or
  scripts/gtkwave_fp_filter.py --self-test      check known encodings, exit 1 on a mismatch
  echo 0011111110000000 | scripts/gtkwave_fp_filter.py
"""

import decimal
import sys
from fractions import Fraction

# (exponent bits, stored mantissa bits) per format, as in docs/numerics.md.
FORMATS = {"bf16": (8, 7), "fp32": (8, 23)}
WIDTH_FORMAT = {16: "bf16", 32: "fp32"}
CANONICAL_NAN = {"bf16": 0x7FC0, "fp32": 0x7FC00000}

decimal.getcontext().prec = 200  # far beyond what an fp32 value's exact expansion needs


def round_to_format(q, fmt):
    """Rounds the exact rational q (not 0) to nearest-even in fmt, in integers; returns the
    encoding's bits without the sign, or None on overflow to infinity. The self-test reads every
    printed decimal back through this, independently of how shortest_decimal chose it."""
    ebits, mbits = FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    num, den = abs(q.numerator), q.denominator
    e = num.bit_length() - den.bit_length()  # floor(log2 q) is e or e - 1
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1
    e = max(e, 1 - bias)  # below the normal range: the subnormal grid
    shift = mbits - e  # m = q * 2^shift, rounded
    div = den << max(0, -shift)
    m, r = divmod(num << max(0, shift), div)
    if 2 * r > div or (2 * r == div and m % 2 == 1):
        m += 1
    if m == 1 << (mbits + 1):  # the carry reaches the next binade
        m >>= 1
        e += 1
    if m < (1 << mbits):  # subnormal (or zero): exponent field 0
        return m
    field = e + bias
    if field >= (1 << ebits) - 1:
        return None
    return (field << mbits) | (m - (1 << mbits))


def exact_value(mag, fmt):
    """The exact value of a finite magnitude encoding (sign bit clear) as a Decimal; mag may be one
    past the largest finite value (2^(emax+1), the next binade's start)."""
    ebits, mbits = FORMATS[fmt]
    bias = (1 << (ebits - 1)) - 1
    field, man = mag >> mbits, mag & ((1 << mbits) - 1)
    if field == 0:
        return decimal.Decimal(man) * decimal.Decimal(2) ** (1 - bias - mbits)
    return decimal.Decimal(man + (1 << mbits)) * decimal.Decimal(2) ** (field - bias - mbits)


def shortest_decimal(mag, fmt):
    """The shortest decimal (a positive Decimal) that reads back, rounded to nearest-even, as the
    finite non-zero magnitude mag; of two as short, the one nearer the value. A decimal reads back
    as mag when it lies strictly between the midpoints to both neighbours, or on one of them when
    mag's significand is even (the tie goes to it)."""
    x = exact_value(mag, fmt)
    lo = (x + exact_value(mag - 1, fmt)) / 2
    hi = (x + exact_value(mag + 1, fmt)) / 2
    even = mag % 2 == 0
    for n in range(1, 18):
        quantum = decimal.Decimal(1).scaleb(x.adjusted() - n + 1)
        best = None
        for rounding in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
            cand = x.quantize(quantum, rounding=rounding)
            if (lo < cand < hi) or (even and (cand == lo or cand == hi)):
                if best is None or abs(cand - x) < abs(best - x):
                    best = cand
        if best is not None:
            return best, best == x
    raise AssertionError("not reached: 9 digits tell any two fp32 values apart")


def format_decimal(d, negative, exact):
    """Prints a decimal like C's %g with all its digits: plain from 1e-4 up to 1e9 when no zero has
    to be made up (an integer shown plainly is the exact value), else d.ddde+x."""
    _, digits, exp = d.as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exp  # digits before the decimal point
    s = "-" if negative else ""
    if -4 < point <= 9 and (point <= len(text) or exact):
        if point <= 0:
            return s + "0." + "0" * (-point) + text
        if point >= len(text):
            return s + text + "0" * (point - len(text))
        return s + text[:point] + "." + text[point:]
    mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{s}{mant}e{point - 1:+03d}"


def decode(bits, fmt):
    """The text for one encoding."""
    ebits, mbits = FORMATS[fmt]
    width = 1 + ebits + mbits
    sign = (bits >> (width - 1)) & 1
    exp = (bits >> mbits) & ((1 << ebits) - 1)
    man = bits & ((1 << mbits) - 1)
    if exp == (1 << ebits) - 1:
        if man == 0:
            return "-inf" if sign else "inf"
        if bits == CANONICAL_NAN[fmt]:
            return "nan"
        return f"nan(0x{bits:0{width // 4}X})"
    if exp == 0 and man == 0:
        return "-0" if sign else "0"
    d, exact = shortest_decimal(bits & ((1 << (width - 1)) - 1), fmt)
    text = format_decimal(d, sign == 1, exact)
    return text + " sub" if exp == 0 else text


def translate(line, forced=None):
    """The filter's answer to one input line (without its newline)."""
    s = line.strip()
    raw = s
    if s[:2].lower() == "0x":
        s = s[2:]
    if not s:
        return raw
    lower = s.lower()
    if set(lower) <= set("01xzuwlh-") and len(s) % 16 == 0:
        width, digits, base = len(s), lower, 2
    elif set(lower) <= set("0123456789abcdefxz") and len(s) % 4 == 0:
        width, digits, base = 4 * len(s), lower, 16
    else:
        return raw
    fmt = forced or WIDTH_FORMAT.get(width)
    if fmt is None:
        return raw
    lane = 1 + sum(FORMATS[fmt])
    if width % lane != 0:
        return raw
    per_lane = lane if base == 2 else lane // 4
    out = []
    for i in range(0, len(digits), per_lane):
        chunk = digits[i:i + per_lane]
        if any(c not in "0123456789abcdef" for c in chunk) or (base == 2 and set(chunk) - set("01")):
            out.append("z" if set(chunk) <= {"z"} else "x")
        else:
            out.append(decode(int(chunk, base), fmt))
    return " | ".join(out)


# Known encodings: (format, bits, text).
SELF_TEST = [
    ("bf16", 0x3F80, "1"),
    ("bf16", 0xBF80, "-1"),
    ("bf16", 0x0000, "0"),
    ("bf16", 0x8000, "-0"),
    ("bf16", 0x0001, "9e-41 sub"),          # smallest subnormal, 2^-133
    ("bf16", 0x007F, "1.17e-38 sub"),       # largest subnormal, 127 * 2^-133
    ("bf16", 0x0080, "1.18e-38"),           # smallest normal, 2^-126
    ("bf16", 0x7F7F, "3.39e+38"),           # largest normal
    ("bf16", 0x7F80, "inf"),
    ("bf16", 0xFF80, "-inf"),
    ("bf16", 0x7FC0, "nan"),
    ("bf16", 0xFFC1, "nan(0xFFC1)"),
    ("bf16", 0x4049, "3.14"),               # pi rounded to bf16 is 3.140625: 3.14 reads back
    ("bf16", 0x3DCD, "0.1"),                # 0.10009765625 is the bf16 nearest 0.1
    ("bf16", 0x3DCC, "0.0996"),             # 0.099609375, its lower neighbour
    ("bf16", 0x4780, "6.55e+04"),           # 65536: 65500 reads back to it; no zeros made up
    ("bf16", 0x447A, "1000"),               # an integer shown plainly is exact
    ("bf16", 0x3C00, "0.0078"),             # 2^-7 = 0.0078125
    ("fp32", 0x3F800000, "1"),
    ("fp32", 0x00000000, "0"),
    ("fp32", 0x80000000, "-0"),
    ("fp32", 0x00000001, "1e-45 sub"),      # smallest subnormal, 2^-149
    ("fp32", 0x00800000, "1.1754944e-38"),  # smallest normal
    ("fp32", 0x7F7FFFFF, "3.4028235e+38"),  # largest normal
    ("fp32", 0xFF800000, "-inf"),
    ("fp32", 0x7FC00000, "nan"),
    ("fp32", 0x7F800001, "nan(0x7F800001)"),
    ("fp32", 0x3DCCCCCD, "0.1"),            # rounding: 0.1 to nearest fp32
    ("fp32", 0x3DCCCCCC, "0.099999994"),
    ("fp32", 0x4B800001, "16777218"),       # 2^24 + 2: above 2^24 the spacing is 2
    ("fp32", 0x4CBEBC20, "100000000"),      # exactly 1e8
    ("fp32", 0x4C800000, "67108864"),       # 2^26 needs all 8 digits
    ("fp32", 0x4B000002, "8388610"),        # exact, so shown plainly with its made-up zero
    ("fp32", 0x4E800001, "1.073742e+09"),   # 2^30 + 128: 1073742000 reads back
    ("fp32", 0x01000001, "2.350989e-38"),   # 2^-125 * (1 + 2^-23): 7 digits suffice
]


def self_test():
    failures = 0
    for fmt, bits, want in SELF_TEST:
        width = 1 + sum(FORMATS[fmt])
        for text in (f"{bits:0{width}b}", f"{bits:0{width // 4}X}"):
            got = translate(text)
            if got != want:
                failures += 1
                print(f"FAIL {fmt} 0x{bits:0{width // 4}X} ({text}): got '{got}', want '{want}'")
    # Every printed decimal reads back to its own encoding (all of bf16; fp32 around powers of
    # two, where the spacing below is half the spacing above, and a stride through the rest).
    checked = 0
    words = [("bf16", b) for b in range(1 << 16)]
    words += [("fp32", (e << 23) + d) for e in range(0, 255) for d in (0, 1, 2, 0x7FFFFF, 0x7FFFFE)]
    words += [("fp32", b) for b in range(0, 0x7F800000, 999_983)]
    for fmt, bits in words:
        text = decode(bits, fmt)
        if text in ("0", "-0") or text.startswith(("nan", "inf", "-inf")):
            continue
        number = decimal.Decimal(text.split()[0])
        mag = bits & ((1 << sum(FORMATS[fmt])) - 1)
        back = round_to_format(Fraction(number), fmt)
        if back != mag:
            failures += 1
            print(f"FAIL {fmt} 0x{bits:X}: '{text}' reads back as {back}")
        # ... and none with a digit fewer does (both neighbours at that length).
        digits = len("".join(map(str, number.as_tuple().digits)).rstrip("0"))
        x = exact_value(mag, fmt)
        for rounding in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
            shorter = x.quantize(decimal.Decimal(1).scaleb(x.adjusted() - digits + 2), rounding)
            if digits > 1 and shorter != 0 and round_to_format(Fraction(shorter), fmt) == mag:
                failures += 1
                if failures <= 20:
                    print(f"FAIL {fmt} 0x{bits:X}: '{text}' but {shorter} reads back too")
        checked += 1
    # x/z and lanes.
    for text, want, forced in [
        ("x" * 16, "x", None), ("z" * 32, "z", None), ("0011111110000000" + "x" * 16, "x", None),
        ("3F80BF80", "1 | -1", "bf16"), ("3F80XXXX", "1 | x", "bf16"), ("101", "101", None),
    ]:
        got = translate(text, forced)
        if got != want:
            failures += 1
            print(f"FAIL '{text}' ({forced or 'auto'}): got '{got}', want '{want}'")
    print(f"gtkwave_fp_filter self-test: {len(SELF_TEST)} named encodings (binary and hex), "
          f"{checked} decimals read back and not shorter, x/z and lanes: {'FAILED ' + str(failures) if failures else 'ok'}")
    return 1 if failures else 0


def main(argv):
    forced = None
    for arg in argv[1:]:
        if arg == "--self-test":
            return self_test()
        if arg.startswith("--format=") and arg[9:] in FORMATS:
            forced = arg[9:]
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            print(f"gtkwave_fp_filter: unknown argument '{arg}' (try --help)", file=sys.stderr)
            return 2
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        try:
            out = translate(line, forced)
        except Exception:  # never stop answering: GTKWave would wait for the line
            out = line.strip()
        sys.stdout.write(out + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
