"""vCard import time of one long value: quoted-printable soft breaks and folds.

    .venv/bin/python bench/vcard_values.py                  # every case, 120 s each
    .venv/bin/python bench/vcard_values.py --cases qp-240k,fold-8m --limit 60
    .venv/bin/python bench/vcard_values.py --uncapped      # without the card caps

Each case is one card `FN:Anna Roth` with a NOTE that is one long value:

- `qp-240k` … `qp-9m`: `NOTE;ENCODING=QUOTED-PRINTABLE:` and `=41=\\r\\n` repeated
  (a quoted-printable "A" and a soft line break) to 240 KB, 480 KB, 960 KB, 9 MB;
- `fold-8m`: `NOTE:a` and `\\r\\n b` repeated 2,000,000 times (8 MB of folds).

Each case runs `contacts.vcard.importer.import_vcards` in a child process
against the benchmark database (.yorik-bench), in a fresh household deleted
again afterwards, and is stopped after `--limit` seconds ("> N s"). Reported:
seconds of the import call, and its summary and first problem line. Import
time that grows faster than the file does is a step worse than linear.

Every case is over the reader's caps (MAX_VALUE_LENGTH, MAX_CARD_LINES),
so the card is skipped with its reason. `--uncapped` lifts both caps in the
child process, so the card is read whole: the time of unfolding, decoding
and storing the value itself.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = {
    "qp-240k": ("qp", 40_000),
    "qp-480k": ("qp", 80_000),
    "qp-960k": ("qp", 160_000),
    "qp-9m": ("qp", 1_500_000),
    "fold-8m": ("fold", 2_000_000),
}
LIMIT_S = 120


def card_of(kind: str, repeats: int) -> bytes:
    """Return the case's card: one NOTE of `repeats` soft breaks or folds."""
    if kind == "qp":
        note = "NOTE;ENCODING=QUOTED-PRINTABLE:" + "=41=\r\n" * repeats + "=41"
        version = "2.1"
    else:
        note = "NOTE:a" + "\r\n b" * repeats
        version = "3.0"
    lines = ["BEGIN:VCARD", f"VERSION:{version}", "FN:Anna Roth", note, "END:VCARD"]
    return ("\r\n".join(lines) + "\r\n").encode()


def measure(case: str, *, uncapped: bool) -> dict[str, object]:
    """Import the case's card into a fresh household; return what it took."""
    from bench.django_setup import setup

    setup()
    from bench.generate import delete_household
    from contacts.vcard import reader
    from contacts.vcard.importer import import_vcards
    from household.models import Household

    if uncapped:
        reader.MAX_VALUE_LENGTH = reader.MAX_CARD_LINES = sys.maxsize

    data = card_of(*CASES[case])
    slug = f"bench-vcard-{case}"
    delete_household(slug)
    household = Household.objects.create(slug=slug, name=f"vCard bench {case}")
    try:
        started = time.perf_counter()
        summary = import_vcards(household=household, data=data)
        seconds = time.perf_counter() - started
    finally:
        delete_household(slug)
    lines = [*summary.problems, *summary.warnings, summary.file_problem]
    return {
        "case": case,
        "bytes": len(data),
        "seconds": round(seconds, 3),
        "summary": str(summary),
        "problem": next((line for line in lines if line), "")[:120],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--limit", type=float, default=LIMIT_S, metavar="SECONDS")
    parser.add_argument("--uncapped", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, uncapped=args.uncapped)))
        return
    print("| case | bytes | import_vcards | summary | first problem |")
    print("| --- | ---: | ---: | --- | --- |")
    for case in args.cases.split(","):
        command = [sys.executable, __file__, "--child", case]
        if args.uncapped:
            command.append("--uncapped")
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=args.limit, check=True
            )
        except subprocess.TimeoutExpired:
            size = len(card_of(*CASES[case]))
            print(f"| {case} | {size:,} | > {args.limit:g} s | stopped | |", flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"| {case} | {row['bytes']:,} | {row['seconds']:.3f} s | "
            f"{row['summary']} | {row['problem']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
