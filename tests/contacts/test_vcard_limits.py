"""What one vCard file may cost: reading takes time in proportion to a card's
length, however long one value is folded.
"""

import time
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from contacts.vcard_import import logical_lines


def vcard(*lines: str) -> str:
    return "\r\n".join(["BEGIN:VCARD", "VERSION:3.0", *lines, "END:VCARD", ""])


def run(path: Path, **options) -> tuple[str, str]:
    """Import a file with the command; return its stdout and stderr."""
    out, err = StringIO(), StringIO()
    call_command(
        "import_vcard", str(path), household="becker", stdout=out, stderr=err, **options
    )
    return out.getvalue().strip(), err.getvalue()


# Reading


def test_logical_lines_unfold_folds_and_quoted_printable_soft_breaks():
    lines = [
        "BEGIN:VCARD",
        "NOTE:one",
        " two",
        "\tthree",
        "NOTE;ENCODING=QUOTED-PRINTABLE:=C3=",
        "=BC=",
        " x",
        "FN:a value that says quoted-printable=",
        "TEL:123",
        "",
        " an orphan fold",
        "END:VCARD",
    ]

    assert list(logical_lines(lines)) == [
        ("BEGIN:VCARD", 1),
        ("NOTE:onetwothree", 2),
        # The decoder takes "=" and the line break out again.
        ("NOTE;ENCODING=QUOTED-PRINTABLE:=C3=\n=BC=\n x", 5),
        ("FN:a value that says quoted-printable=", 8),
        ("TEL:123", 9),
        (" an orphan fold", 11),
        ("END:VCARD", 12),
    ]


def test_logical_lines_read_a_long_value_in_linear_time():
    # 1.2 MB of quoted-printable soft breaks: vobject's line reader, which
    # copied and searched the value again at every line, took 34 s for it.
    breaks = 200_000
    lines = ["NOTE;QUOTED-PRINTABLE:=41=", *["=41="] * (breaks - 1), "=41", "FN:A"]

    started = time.perf_counter()
    (note, first), (name, second) = logical_lines(lines)
    elapsed = time.perf_counter() - started

    assert note == "NOTE;QUOTED-PRINTABLE:" + "=41=\n" * breaks + "=41"
    assert (first, name, second) == (1, "FN:A", breaks + 2)
    assert elapsed < 5


def test_a_line_of_many_parameters_without_a_colon_is_named_quickly(
    household, tmp_path
):
    # vobject's line pattern backtracked over every way to split these
    # parameters: 2 s for 24 of them, twice that for each one more.
    line = "TEL;" + ";".join(["a"] * 28)
    path = tmp_path / "params.vcf"
    path.write_text(vcard("FN:Anna Roth", line))

    started = time.perf_counter()
    out, err = run(path)
    elapsed = time.perf_counter() - started

    assert out == "found 1: created 1, updated 0, unchanged 0, skipped 0"
    assert err.strip() == (
        f"card 1 (Anna Roth): line 4 ignored: cannot be read: {line[:40]!r}"
    )
    assert elapsed < 5
