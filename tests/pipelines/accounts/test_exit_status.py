"""The command's exit status over its accounts' own (docs/accounts.md), and the per-account lines."""

from __future__ import annotations

import io

import pytest

from pipelines.accounts import AccountRun, overall_exit_status
from pipelines.cli.accounts import print_accounts


@pytest.mark.parametrize(
    ("statuses", "overall"),
    [
        ([0], 0),
        ([0, 0, 0], 0),
        ([3], 3),
        ([1], 1),
        ([2], 2),
        ([0, 1, 0], 3),
        ([0, 2], 3),
        ([3, 1], 3),
        ([1, 2], 1),
        ([2, 2], 2),
        ([1, 1], 1),
    ],
)
def test_overall_exit_status(statuses, overall):
    runs = [AccountRun(f"a{index}", status) for index, status in enumerate(statuses)]
    assert overall_exit_status(runs) == overall


def test_a_line_per_account_then_the_verdict():
    runs = [AccountRun("acme", 0), AccountRun("beta", 1, message="FAILED: x"), AccountRun("gamma", 3)]
    out = io.StringIO()
    print_accounts(runs, overall_exit_status(runs), out)
    assert out.getvalue().splitlines() == [
        "",
        f"{'account':40} {'exit status':>12}  outcome",
        f"{'acme':40} {0:>12}  loaded",
        f"{'beta':40} {1:>12}  FAILED",
        f"{'gamma':40} {3:>12}  PARTIAL",
        "1 of 3 accounts fully loaded; not: beta, gamma (exit status 3; the reasons are on stderr).",
    ]
