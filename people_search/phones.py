"""Parse, normalise and match phone numbers with the household's region."""

from dataclasses import dataclass

import phonenumbers


class InvalidPhoneNumber(ValueError):
    """The text is not a possible phone number in the given region."""


@dataclass(frozen=True)
class PhoneNumber:
    e164: str
    nsn: str

    @property
    def digits(self) -> str:
        return self.e164.removeprefix("+")


def parse_phone(raw: str, region: str) -> PhoneNumber:
    """Return the number as E.164 and national significant digits, or raise.

    A number counts when it is *possible* for its country; validity metadata
    lags behind newly allocated ranges, so it is not required here.
    """
    text = (raw or "").strip()
    if text.startswith("00"):
        text = "+" + text[2:]
    try:
        number = phonenumbers.parse(text, region.upper())
    except phonenumbers.NumberParseException as error:
        raise InvalidPhoneNumber(
            f"not a phone number for region {region.upper()}"
        ) from error
    possible = (
        phonenumbers.is_possible_number_with_reason(number)
        == phonenumbers.ValidationResult.IS_POSSIBLE
    )
    if not possible or any(char.isalpha() for char in text):
        raise InvalidPhoneNumber(f"not a phone number for region {region.upper()}")
    return PhoneNumber(
        e164=phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
        nsn=phonenumbers.national_significant_number(number),
    )


def format_phone(e164: str, region: str) -> str:
    """Return a stored E.164 number formatted for people of the given region."""
    if not e164:
        return ""
    number = phonenumbers.parse(e164, region.upper())
    if phonenumbers.region_code_for_number(number) == region.upper():
        return phonenumbers.format_number(
            number, phonenumbers.PhoneNumberFormat.NATIONAL
        )
    return phonenumbers.format_number(
        number, phonenumbers.PhoneNumberFormat.INTERNATIONAL
    )
