#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make lint`'s register rule (docs/conventions.md): an `always_ff` block only registers.

Next state is computed in `always_comb` (or an `assign`) as `*_d`; an `always_ff` holds the
reset, enables (`if`) and plain copies. This check rejects a `case` or an arithmetic operator
(+ - * / % << >>) inside an `always_ff`, outside index expressions, `for` headers, strings and
comments, and an arithmetic operator in the next-state argument of `TPU_FF / `TPU_FFL
(rtl/include/tpu_ff.svh). Code between `ifndef SYNTHESIS and its `endif (assertions and their
counters: checkers, not hardware) is skipped. Prints one line per offending block; exits 1 if
there is any.

    scripts/lint_ff.py FILE...
    scripts/lint_ff.py --self-test    (the fast test rtl_register_rule: the rule on samples,
                                       then on every file of rtl/rtl.f)
"""
import re
import sys

TOKENS = re.compile(r'\b(begin|end|case|casez|casex|endcase)\b')
ARITH = re.compile(r'(\+|(?<![<=!])-(?!>)|\*|/|%|<<(?!=)|>>)')


def hardware(lines):
    """The lines with comments, strings and the `ifndef SYNTHESIS regions blanked (same count)."""
    text = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), '\n'.join(lines),
                  flags=re.S)
    out, depth, sim = [], 0, 0
    for line in text.split('\n'):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', re.sub(r'//.*', '', line))
        if re.match(r'\s*`ifn?def\b', code):
            depth += 1
            if re.match(r'\s*`ifndef\s+SYNTHESIS\b', code) and not sim:
                sim = depth
        elif re.match(r'\s*`endif\b', code):
            if sim == depth:
                sim = 0
            depth -= 1
        out.append('' if sim else code)
    return out


def blocks(lines):
    """Yields (first, last) line indexes of every always_ff block."""
    i = 0
    while i < len(lines):
        code = re.sub(r'//.*', '', lines[i])
        if not re.search(r'\balways_ff\b', code):
            i += 1
            continue
        depth, seen, j = 0, False, i
        while j < len(lines):
            code = re.sub(r'//.*', '', lines[j])
            if j == i:
                code = code.split('always_ff', 1)[1]
            for tok in TOKENS.findall(code):
                if tok in ('begin', 'case', 'casez', 'casex'):
                    depth, seen = depth + 1, True
                else:
                    depth -= 1
            if (seen and depth == 0) or (not seen and ';' in code):
                break
            j += 1
        yield i, j
        i = j + 1


def strip(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    text = re.sub(r'@\([^)]*\)', ' ', text)                 # the event control
    text = re.sub(r'\bfor\s*\([^;]*;[^;]*;[^)]*\)', ' ', text)  # loop headers
    while True:                                              # index expressions
        new = re.sub(r'\[[^\[\]]*\]', ' ', text)
        if new == text:
            return text
        text = new


MACRO = re.compile(r'`TPU_FFL?\(([^,]+),([^\n]*)\)\s*$')


def check(path, text=None):
    lines = hardware((open(path, encoding='utf-8').read() if text is None else text).split('\n'))
    bad = []
    for i, line in enumerate(lines):
        m = MACRO.search(line)
        if m and ARITH.search(strip(m.group(2).replace('<=', ' '))):
            macro = line.split("(")[0].strip()
            bad.append(f'{path}:{i + 1}: arithmetic in the next state of {macro} '
                       '(compute it as *_d)')
    for first, last in blocks(lines):
        text = strip('\n'.join(lines[first:last + 1]))
        text = text.replace('<=', ' ')
        why = []
        if re.search(r'\bcase[zx]?\b', text):
            why.append('case')
        if ARITH.search(text):
            why.append('arithmetic')
        if why:
            bad.append(f'{path}:{first + 1}-{last + 1}: {" and ".join(why)} in always_ff '
                       '(compute it as *_d in always_comb)')
    return bad


SAMPLES = [  # (text, offending?)
    ("always_ff @(posedge clk_i) cnt_q <= cnt_q + 1'b1;", True),
    ("always_ff @(posedge clk_i or negedge rst_ni) begin\n  if (!rst_ni) s_q <= A;\n"
     "  else case (s_q) A: s_q <= B; default: ; endcase\nend", True),
    ("always_ff @(posedge clk_i) begin\n  if (en) x_q <= y_q - z_q;\nend", True),
    ("always_ff @(posedge clk_i) p_q <= p_q << 1;", True),
    ("always_ff @(posedge clk_i or negedge rst_ni) begin\n  if (!rst_ni) cnt_q <= '0;\n"
     "  else if (en) cnt_q <= cnt_d;\nend", False),
    ("always_ff @(posedge clk_i) begin\n  for (int i = 1; i < N; i++) d_q[i] <= d_q[i-1];\n"
     "  m_q[8*k +: 8] <= w; // a - b\nend", False),
    ("`ifndef SYNTHESIS\nalways_ff @(posedge clk_i) begin\n  if (rst_ni) a_x: assert (a == b - 1)\n"
     "    else $error(\"a - b\");\nend\n`endif", False),
    ("always_ff @(posedge clk_i) begin\n  n_q <= n_q + 1;\n  a_x: assert (n_q < 9);\nend", True),
    ("`TPU_FF(cnt_q, cnt_q + 1'b1, '0)", True),
    ("`TPU_FFL(ptr_q, ptr_d, take_i && v[i-1], '0)", False),
    ("/* always_ff begin */ always_ff @(posedge clk_i) begin\n  x_q <= \"end\" ;\n"
     "  y_q <= y_q - 1;\nend", True),
    ("always_ff @(posedge clk_i) v_q <= a_q <= b_q;", False),
]


def self_test():
    wrong = [text for text, bad in SAMPLES if bool(check('sample', text)) != bad]
    for text in wrong:
        print(f'lint_ff self-test: wrong verdict on:\n{text}')
    files = [l.strip() for l in open('rtl/rtl.f', encoding='utf-8')
             if l.strip() and not l.strip().startswith(('//', '+incdir+'))]
    bad = [b for path in files for b in check(path)]
    for b in bad:
        print(b)
    print(f'lint_ff self-test: {len(SAMPLES) - len(wrong)}/{len(SAMPLES)} samples right, '
          f'{len(files)} RTL files, {len(bad)} offending blocks')
    return 1 if wrong or bad else 0


def main(argv):
    if argv == ['--self-test']:
        return self_test()
    bad = [b for path in argv for b in check(path)]
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
