# SPDX-License-Identifier: Apache-2.0
"""scripts/regress.py's modules (docs/regress.md): common, matrix, launch, report, merge."""
