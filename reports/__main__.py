"""``python -m reports``: turn run reports into answers.

    python -m reports compare BASE NEW [--markdown FILE]   what changed; exit 1 on regressions
    python -m reports matrix RUN... [-o FILE]              properties x runs, as one HTML page
    python -m reports html RUN                             (re)write a run's report.html
    python -m reports bench [--devices N...] [-- ARGS]     time pytest suites/ per suite (and growth)
    python -m reports table RUN                            a run's time, examples and compilations

BASE, NEW and RUN are run folders (holding report.json) or report.json files. Exit status: 0 fine,
1 regressions found, 2 a bad argument or a malformed report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.runner.run_folder import write_atomically

from . import bench as bench_
from . import compare as cmp
from .html import matrix_page, run_page
from .record import ReportError, load, resolve


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("compare", help="what changed between two runs; exit 1 on regressions")
    c.add_argument("base")
    c.add_argument("new")
    c.add_argument("--markdown", metavar="FILE", help="also write the comparison as Markdown")
    m = commands.add_parser("matrix", help="one HTML table of properties x runs")
    m.add_argument("runs", nargs="+")
    m.add_argument("-o", "--output", default="matrix.html", help="where to write (default matrix.html)")
    h = commands.add_parser("html", help="write a run's report.html from its report.json")
    h.add_argument("run")
    b = commands.add_parser("bench", help="run pytest suites/ and print where the time goes")
    b.add_argument("--devices", type=int, nargs="+", default=[8],
                   help="forced CPU device counts, one run each (default 8)")
    b.add_argument("--keep", metavar="DIR", help="keep the runs' reports here (default a temp folder)")
    b.add_argument("pytest_args", nargs="*", help="more pytest arguments, after -- (e.g. -- -n 2)")
    t = commands.add_parser("table", help="a run's seconds, examples/s and compilations per suite")
    t.add_argument("run")
    args = parser.parse_args(argv)
    try:
        if args.command == "bench":
            return bench_.bench(args.devices, args.keep, args.pytest_args)
        if args.command == "table":
            print(bench_.table(load(args.run)))
            return 0
        if args.command == "compare":
            base, new = load(args.base), load(args.new)
            changes = cmp.compare(base, new)
            print(cmp.text_table(base, new, changes))
            if args.markdown:
                write_atomically(Path(args.markdown), cmp.markdown(base, new, changes))
            return 1 if cmp.has_regressions(changes) else 0
        if args.command == "matrix":
            records = [load(run) for run in args.runs]
            write_atomically(Path(args.output), matrix_page(records))
            print(f"wrote {args.output}: {len(records)} runs")
            return 0
        record = load(args.run)
        out = resolve(args.run).with_name("report.html")
        write_atomically(out, run_page(record))
        print(f"wrote {out}")
        return 0
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
