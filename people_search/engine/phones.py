"""Parse, normalise and match phone numbers with the household's region."""

import re
from dataclasses import dataclass
from urllib.parse import unquote

import phonenumbers
from django.utils.translation import gettext


class InvalidPhoneNumber(ValueError):
    """The text is not a possible phone number in the given region."""


def _not_a_phone(region: str) -> InvalidPhoneNumber:
    """Return the error in the active language: an admin form shows it as is."""
    return InvalidPhoneNumber(
        gettext("not a phone number for region %(region)s") % {"region": region.upper()}
    )


@dataclass(frozen=True)
class PhoneNumber:
    e164: str
    nsn: str

    @property
    def digits(self) -> str:
        return self.e164.removeprefix("+")


# A write parses a number as typed, then its E.164 form twice more: to
# validate the row and to derive its phone digits. Both forms read as the same
# number, so the immutable result is kept under each.
_PARSED_MAX = 4096
_parsed: dict[tuple[str, str], PhoneNumber] = {}


def parse_phone(raw: str, region: str) -> PhoneNumber:
    """Return the number as E.164 and national significant digits, or raise.

    A number counts when it is *possible* for its country; validity metadata
    lags behind newly allocated ranges, so it is not required here.
    """
    number = _parsed.get((raw, region))
    if number is None:
        number = _parse_phone(raw, region)
        if len(_parsed) >= _PARSED_MAX:
            _parsed.clear()
        _parsed[(raw, region)] = _parsed[(number.e164, region)] = number
    return number


def _parse_phone(raw: str, region: str) -> PhoneNumber:
    text = _international_prefix_as_plus((raw or "").strip())
    try:
        number = phonenumbers.parse(text, region.upper())
    except phonenumbers.NumberParseException as error:
        raise _not_a_phone(region) from error
    possible = (
        phonenumbers.is_possible_number_with_reason(number)
        == phonenumbers.ValidationResult.IS_POSSIBLE
    )
    if not possible or any(char.isalpha() for char in text):
        raise _not_a_phone(region)
    if _too_short_for_its_mobile_range(number):
        raise InvalidPhoneNumber(
            gettext("too short for a mobile number of region %(region)s")
            % {"region": phonenumbers.region_code_for_country_code(number.country_code)}
        )
    return PhoneNumber(
        e164=phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
        nsn=phonenumbers.national_significant_number(number),
    )


# The most digits a too-short mobile number is missing for the check below.
_MISSING_DIGITS = 3
_MOBILE_TYPES = frozenset(
    {
        phonenumbers.PhoneNumberType.MOBILE,
        phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
    }
)


def _too_short_for_its_mobile_range(number: phonenumbers.PhoneNumber) -> bool:
    """Return whether an invalid number starts a mobile range but lacks digits.

    A country's overall lengths can admit such a number ("0151 555 12 34" in
    Germany, whose numbers have 5 to 15 digits) while its mobile range has a
    fixed length, so it cannot exist. A number valid as it is, or one that
    starts no longer mobile number, stays accepted: metadata lags behind
    newly allocated ranges.
    """
    if phonenumbers.is_valid_number(number):
        return False
    nsn = phonenumbers.national_significant_number(number)
    for missing in range(1, _MISSING_DIGITS + 1):
        for digit in "0123456789":
            longer = phonenumbers.PhoneNumber(
                country_code=number.country_code,
                national_number=int(nsn + digit * missing),
                italian_leading_zero=number.italian_leading_zero,
                number_of_leading_zeros=number.number_of_leading_zeros,
            )
            if (
                phonenumbers.is_valid_number(longer)
                and phonenumbers.number_type(longer) in _MOBILE_TYPES
            ):
                return True
    return False


@dataclass(frozen=True)
class DialledNumber:
    """A number as address books write it, with what is dialled after it."""

    number: PhoneNumber
    # The extension's digits ("123" of "x123", "ext. 123", ";ext=123").
    extension: str = ""
    # Pause and wait dialling after the number ("p1234p5678w9", ",,12").
    post_dial: str = ""


# Pause (p or ,) and wait (w or ;) characters end a number at the first one
# that follows a digit; the rest is dialled after the call connects.
_POST_DIAL = re.compile(r"(?<=\d)\s*([pw,;][\dpw,;#*\s]*)$", re.IGNORECASE)
_EXTENSION = re.compile(
    r"\s*[,;]?\s*(?:ext\.?|extn\.?|extension|x|durchwahl|dw\.?|#)"
    r"\s*[:=]?\s*(\d{1,10})\s*$",
    re.IGNORECASE,
)
# Vanity numbers spell digits with letters (1-800-FLOWERS): a number that
# starts with digits and goes on with at least three letters.
_VANITY = re.compile(
    r"^\+?[\d\s().\-/]*\d[\d\s().\-/]*"
    r"(?:[A-Za-z][\s().\-/]*){3,}[\dA-Za-z\s().\-/]*$"
)


def parse_dialled_phone(raw: str, region: str) -> DialledNumber:
    """Return a number written the ways address books write them, or raise.

    Reads `tel:` URIs (RFC 3966, with `;ext=`), extensions (`x123`, `ext.
    123`, `#123`, `Durchwahl 123`), pause and wait dialling (`p`, `w`, `,`,
    `;` after the number) and vanity letters (`1-800-FLOWERS`). The number
    itself must pass parse_phone.
    """
    text = unquote(raw or "").strip()
    if text[:4].lower() == "tel:":
        return _parse_tel_uri(text, region)
    post_dial = ""
    if match := _POST_DIAL.search(text):
        post_dial = "".join(match[1].split()).lower()
        text = text[: match.start()]
    extension = ""
    if (match := _EXTENSION.search(text)) and match.start() > 0:
        extension = match[1]
        text = text[: match.start()]
    if any(char.isalpha() for char in text) and _VANITY.match(text):
        text = phonenumbers.convert_alpha_characters_in_number(text)
    return DialledNumber(parse_phone(text, region), extension, post_dial)


def _parse_tel_uri(uri: str, region: str) -> DialledNumber:
    """Return a `tel:` URI's number and extension; phonenumbers reads RFC 3966."""
    try:
        parsed = phonenumbers.parse(uri, region.upper())
    except phonenumbers.NumberParseException as error:
        raise _not_a_phone(region) from error
    e164 = phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)
    return DialledNumber(parse_phone(e164, region), parsed.extension or "")


def format_phone(e164: str, region: str) -> str:
    """Return a stored E.164 number formatted for people of the given region.

    A number kept as written (one the library cannot read) is shown as written.
    """
    if not e164:
        return ""
    try:
        number = phonenumbers.parse(e164, region.upper())
    except phonenumbers.NumberParseException:
        return e164
    if phonenumbers.region_code_for_number(number) == region.upper():
        return phonenumbers.format_number(
            number, phonenumbers.PhoneNumberFormat.NATIONAL
        )
    return phonenumbers.format_number(
        number, phonenumbers.PhoneNumberFormat.INTERNATIONAL
    )


# A phone kept as written has at least this many digits, the letters of a
# vanity number counted as theirs: fewer are an extension or a short code.
MIN_WRITTEN_PHONE_DIGITS = 7
# How a number is written: digits first, then maybe a vanity number's letters
# ("+1-800-MYFAX"); a text such as "BusinessPhone" is none.
_WRITTEN_PHONE = re.compile(r"^\+?[\s().\-/]*\d[\d\s().\-/]*[\dA-Za-z\s().\-/]*$")


def written_phone_digits(value: str) -> str:
    """Return the digits of a phone number as written, vanity letters as digits."""
    return _NON_DIGITS.sub("", phonenumbers.convert_alpha_characters_in_number(value))


def is_written_phone(value: str) -> bool:
    """Return whether a text is a phone number as written, with enough digits."""
    return bool(_WRITTEN_PHONE.match(value)) and (
        len(written_phone_digits(value)) >= MIN_WRITTEN_PHONE_DIGITS
    )


_PHONE_SHAPE = re.compile(r"^[\d\s+().\-/]+$")
_NON_DIGITS = re.compile(r"\D")


def is_phone_shaped(text: str) -> bool:
    """Return whether text is only phone characters with at least three digits."""
    return bool(_PHONE_SHAPE.match(text)) and sum(c.isdigit() for c in text) >= 3


def phone_query_digits(text: str, region: str) -> str | None:
    """Return the digits a phone-shaped query looks for inside stored numbers.

    A complete number reduces to its national significant number, so
    `050-123-4567` and `+972 50 123 4567` look for the same digits; a partial
    one drops its trunk zeros (`050-12` looks for `5012`). Not phone-shaped: None.
    """
    text = text.strip()
    if not is_phone_shaped(text):
        return None
    try:
        return parse_phone(text, region).nsn
    except InvalidPhoneNumber:
        pass
    text = _international_prefix_as_plus(text)
    if text.startswith("+"):
        try:
            nsn = phonenumbers.national_significant_number(
                phonenumbers.parse(text, region.upper())
            )
        except phonenumbers.NumberParseException:
            nsn = ""
        return nsn or None
    return _NON_DIGITS.sub("", text).lstrip("0") or None


def _international_prefix_as_plus(text: str) -> str:
    return "+" + text[2:] if text.startswith("00") else text


def is_valid_phone(text: str, region: str) -> bool:
    """Return whether text is only a complete number valid by phonenumbers' metadata.

    Stricter than parse_phone's "possible": only where a rule asks for valid.
    """
    if not is_phone_shaped(text):
        return False
    try:
        number = phonenumbers.parse(_international_prefix_as_plus(text), region.upper())
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)
