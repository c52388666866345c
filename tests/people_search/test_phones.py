"""Numbers as address books write them, read by the engine's one phone parser."""

import pytest

from people_search.engine.phones import (
    InvalidPhoneNumber,
    format_phone,
    is_written_phone,
    parse_dialled_phone,
    parse_phone,
)


@pytest.mark.parametrize(
    ("written", "e164", "extension", "post_dial"),
    [
        ("tel:+49-30-2977441;ext=12", "+49302977441", "12", ""),
        ("tel:+1-201-555-0123", "+12015550123", "", ""),
        ("030 2977441 x15", "+49302977441", "15", ""),
        ("030 2977441 ext. 16", "+49302977441", "16", ""),
        ("+49 30 2977441;ext=5", "+49302977441", "5", ""),
        ("030 2977441 Durchwahl 17", "+49302977441", "17", ""),
        ("030 2977441#18", "+49302977441", "18", ""),
        ("+49 30 2977445p1234p5678w9", "+49302977445", "", "p1234p5678w9"),
        ("030 2977445,,12", "+49302977445", "", ",,12"),
        ("0800 FLOWERS", "+498003569377", "", ""),
        ("+1-800-FLOWERS", "+18003569377", "", ""),
        ("030 2977441-99", "+4930297744199", "", ""),
    ],
)
def test_dialled_numbers_keep_their_extension_and_dialling(
    written, e164, extension, post_dial
):
    dialled = parse_dialled_phone(written, "DE")

    assert (dialled.number.e164, dialled.extension, dialled.post_dial) == (
        e164,
        extension,
        post_dial,
    )


@pytest.mark.parametrize(
    "written",
    ["BusinessPhone", "+5555555", "p1234p5678w9", "x123", "Mama: 0171 1234567", ""],
)
def test_what_is_no_number_is_refused(written):
    with pytest.raises(InvalidPhoneNumber):
        parse_dialled_phone(written, "DE")


def test_a_number_the_library_cannot_read_is_shown_as_written():
    assert format_phone("+999 1234567", "DE") == "+999 1234567"


@pytest.mark.parametrize(
    ("written", "kept"),
    [("+123456789", True), ("+1-800-MYFAX", True), ("110", False), ("Büro", False)],
)
def test_a_number_with_enough_digits_is_kept_as_written(written, kept):
    assert is_written_phone(written) is kept


@pytest.mark.parametrize(
    ("written", "region"),
    [("0151 5551234", "DE"), ("0171 123456", "DE"), ("07911 12345", "GB")],
)
def test_a_mobile_number_missing_digits_is_refused(written, region):
    with pytest.raises(InvalidPhoneNumber, match="too short for a mobile number"):
        parse_phone(written, region)


@pytest.mark.parametrize(
    ("written", "region"),
    [("0151 55512345", "DE"), ("030 123", "DE"), ("050-123-4567", "IL")],
)
def test_a_possible_number_outside_a_short_mobile_range_is_accepted(written, region):
    assert parse_phone(written, region).e164
