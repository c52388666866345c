"""The household's address book and its mirror of Paperless-ngx."""

import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email
from django.db import models
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from contacts.dates import STORED_DAY, validate_day
from household.models import Household
from people_search.engine.phones import (
    MIN_WRITTEN_PHONE_DIGITS,
    InvalidPhoneNumber,
    is_written_phone,
    parse_phone,
)
from yorik.indexes import (
    household_array_index,
    household_trigram_index,
    search_index,
)
from yorik.tenancy import HouseholdForeignKey, HouseholdRow


def new_contact_ref() -> str:
    return f"c-{secrets.token_hex(5)}"


class ContactKind(models.TextChoices):
    PERSON = "person", _("Person")
    BUSINESS = "business", _("Business")


class ContactStatus(models.TextChoices):
    ACTIVE = "active", _("Active")
    PENDING = "pending", _("Pending")
    SPAM = "spam", _("Spam")
    ARCHIVED = "archived", _("Archived")


# What callers may filter contacts by: "any" means active or pending.
STATUS_FILTERS = ["any", *ContactStatus.values]
DEFAULT_CONTACT_STATUSES = (ContactStatus.ACTIVE, ContactStatus.PENDING)


class Contact(HouseholdRow):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="contacts",
        verbose_name=_("household"),
    )
    ref = models.CharField(
        max_length=64,
        default=new_contact_ref,
        help_text=_("Stable reference used by household bundles."),
        verbose_name=_("ref"),
    )
    display_name = models.CharField(max_length=300, verbose_name=_("display name"))
    first_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("first name")
    )
    last_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("last name")
    )
    kind = models.CharField(
        max_length=16,
        choices=ContactKind.choices,
        default=ContactKind.PERSON,
        verbose_name=_("kind"),
    )
    relation = models.CharField(
        max_length=200,
        blank=True,
        help_text=_(
            'Who this is to the household, e.g. "Großmutter" or "mein Zahnarzt".'
        ),
        verbose_name=_("relation"),
    )
    status = models.CharField(
        max_length=16,
        choices=ContactStatus.choices,
        default=ContactStatus.ACTIVE,
        verbose_name=_("status"),
    )
    tags = ArrayField(
        models.CharField(max_length=64),
        default=list,
        blank=True,
        verbose_name=_("tags"),
    )
    notes = models.TextField(blank=True, verbose_name=_("notes"))
    organization = models.CharField(
        max_length=300,
        blank=True,
        help_text=_(
            "The company or institution a person works for; a business's "
            "own name when it differs from its display name."
        ),
        verbose_name=_("organization"),
    )
    title = models.CharField(
        max_length=200,
        blank=True,
        help_text=_("Job title or role, e.g. “Kieferorthopädin”."),
        verbose_name=_("job title"),
    )
    birthday = models.CharField(
        max_length=10,
        blank=True,
        validators=[validate_day],
        help_text=_("1980-04-15, or --04-15 when the year is not known."),
        verbose_name=_("birthday"),
    )
    anniversary = models.CharField(
        max_length=10,
        blank=True,
        validators=[validate_day],
        help_text=_("1980-04-15, or --04-15 when the year is not known."),
        verbose_name=_("anniversary"),
    )
    urls = ArrayField(
        models.CharField(max_length=1000),
        default=list,
        blank=True,
        help_text=_("Web addresses, one a line."),
        verbose_name=_("web addresses"),
    )
    last_contacted_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("last contacted at")
    )
    vcard_uid = models.CharField(
        _("vCard UID"),
        max_length=255,
        blank=True,
        help_text=_("UID of the vCard this contact was imported from."),
    )
    sort_name = models.CharField(max_length=300, default="", editable=False)
    search_text = models.TextField(blank=True, editable=False)
    match_text = models.TextField(blank=True, editable=False)
    concepts = ArrayField(
        models.CharField(max_length=64), default=list, blank=True, editable=False
    )
    phone_digits = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("contact")
        verbose_name_plural = _("contacts")
        ordering = ["display_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "ref"], name="contact_ref_unique"
            ),
            models.UniqueConstraint(
                fields=["household", "vcard_uid"],
                condition=~models.Q(vcard_uid=""),
                name="contact_vcard_uid_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=ContactKind.values),
                name="contact_kind_known",
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=ContactStatus.values),
                name="contact_status_known",
            ),
            models.CheckConstraint(
                condition=~models.Q(display_name=""), name="contact_has_display_name"
            ),
            models.CheckConstraint(
                condition=models.Q(birthday="") | models.Q(birthday__regex=STORED_DAY),
                name="contact_birthday_day",
            ),
            models.CheckConstraint(
                condition=models.Q(anniversary="")
                | models.Q(anniversary__regex=STORED_DAY),
                name="contact_anniversary_day",
            ),
        ]
        indexes = [
            household_trigram_index("search_text", "contact_search_trgm"),
            household_trigram_index("phone_digits", "contact_phone_trgm"),
            models.Index(fields=["household", "status", "kind", "sort_name"]),
            # Duplicate proposals join contacts of the same folded name.
            models.Index(fields=["household", "sort_name"]),
            search_index(fields=["tags"], name="contact_tags_gin"),
            household_array_index("concepts", "contact_concepts_gin"),
        ]

    def __str__(self) -> str:
        return self.display_name

    def get_absolute_url(self) -> str:
        return f"/contacts/{self.pk}/"


class ContactAlias(HouseholdRow):
    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    contact = HouseholdForeignKey(
        Contact,
        on_delete=models.CASCADE,
        related_name="aliases",
        verbose_name=_("contact"),
    )
    name = models.CharField(max_length=200, verbose_name=_("name"))

    class Meta:
        verbose_name = _("contact alias")
        verbose_name_plural = _("contact aliases")
        constraints = [
            models.UniqueConstraint(
                fields=["household", "contact", "name"], name="contact_alias_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ChannelKind(models.TextChoices):
    PHONE = "phone", pgettext_lazy("channel kind", "Phone")
    EMAIL = "email", pgettext_lazy("channel kind", "Email")
    WHATSAPP = "whatsapp", pgettext_lazy("channel kind", "WhatsApp")
    SIGNAL = "signal", pgettext_lazy("channel kind", "Signal")
    TELEGRAM = "telegram", pgettext_lazy("channel kind", "Telegram")
    OTHER = "other", pgettext_lazy("channel kind", "Other")


def normalize_channel_value(kind: str, value: str, region: str) -> str:
    """Return a channel value in its stored form, or raise a ValueError.

    Phones become E.164 read in the household's region, emails lower case;
    chat ids are kept as given. The error says why in the active language.
    """
    value = (value or "").strip()
    if not value:
        raise ValueError(gettext("must not be empty"))
    if kind == ChannelKind.PHONE:
        return parse_phone(value, region).e164
    if kind == ChannelKind.EMAIL:
        try:
            validate_email(value)
        except ValidationError as error:
            raise ValueError(gettext("not an email address")) from error
        return value.lower()
    return value


class ContactChannel(HouseholdRow):
    # No index of its own: the (household, kind, value) index below serves
    # the household alone too. Beside a household-only index the planner takes
    # that one for a small household and tests every channel of it for each
    # contact (docs/performance.md, "The channel lookup's index").
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        db_index=False,
        verbose_name=_("household"),
    )
    contact = HouseholdForeignKey(
        Contact,
        on_delete=models.CASCADE,
        related_name="channels",
        verbose_name=_("contact"),
    )
    kind = models.CharField(
        max_length=16, choices=ChannelKind.choices, verbose_name=_("kind")
    )
    value = models.CharField(
        max_length=254,
        help_text=_("Phones are stored as E.164, emails in lower case."),
        verbose_name=_("value"),
    )
    label = models.CharField(max_length=64, blank=True, verbose_name=_("label"))
    as_written = models.BooleanField(
        default=False,
        help_text=_(
            "A phone number the phone library cannot read, kept as the address "
            "book wrote it; a search still finds its digits."
        ),
        verbose_name=_("kept as written"),
    )

    class Meta:
        verbose_name = _("contact channel")
        verbose_name_plural = _("contact channels")
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=ChannelKind.values),
                name="channel_kind_known",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="phone")
                | models.Q(as_written=True)
                | models.Q(value__regex=r"^\+[1-9][0-9]{1,14}$"),
                name="channel_phone_e164",
            ),
            models.CheckConstraint(
                condition=models.Q(as_written=False) | models.Q(kind="phone"),
                name="channel_as_written_phone",
            ),
        ]
        indexes = [models.Index(fields=["household", "kind", "value"])]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.value}"

    def clean(self) -> None:
        super().clean()
        self.normalize_value()

    def normalize_value(self) -> None:
        """Store the value in its normalised form, or raise naming the field.

        A phone kept as written stays as it is, but needs its digits.
        """
        if self.household_id is None:  # Reported as a missing household instead.
            return
        if self.as_written:
            self.value = (self.value or "").strip()
            if self.kind != ChannelKind.PHONE:
                raise ValidationError(
                    {"as_written": gettext("only a phone is kept as written")}
                )
            if not is_written_phone(self.value):
                raise ValidationError(
                    {
                        "value": gettext(
                            "not a phone number: it needs %(count)d digits"
                        )
                        % {"count": MIN_WRITTEN_PHONE_DIGITS}
                    }
                )
            return
        try:
            self.value = normalize_channel_value(
                self.kind, self.value, self.household.default_region
            )
        except (ValueError, InvalidPhoneNumber) as error:
            raise ValidationError({"value": str(error)}) from error


def one_line_address(line1: str, postcode: str, city: str) -> str:
    """Return an address on one line: "Hauptstr. 5, 10115 Berlin"."""
    return ", ".join(part for part in (line1, f"{postcode} {city}".strip()) if part)


class AddressKind(models.TextChoices):
    HOME = "home", pgettext_lazy("address kind", "Home")
    WORK = "work", pgettext_lazy("address kind", "Work")
    BILLING = "billing", pgettext_lazy("address kind", "Billing")
    SHIPPING = "shipping", pgettext_lazy("address kind", "Shipping")


class Address(HouseholdRow):
    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    contact = HouseholdForeignKey(
        Contact,
        on_delete=models.CASCADE,
        related_name="addresses",
        verbose_name=_("contact"),
    )
    kind = models.CharField(
        max_length=16,
        choices=AddressKind.choices,
        default=AddressKind.HOME,
        verbose_name=_("kind"),
    )
    line1 = models.CharField(_("street and number"), max_length=200, blank=True)
    line2 = models.CharField(
        max_length=200, blank=True, verbose_name=_("address line 2")
    )
    extended = models.CharField(
        max_length=200,
        blank=True,
        help_text=_("Apartment, floor or building, as vCard's extended address."),
        verbose_name=_("extended address"),
    )
    po_box = models.CharField(max_length=100, blank=True, verbose_name=_("PO box"))
    postcode = models.CharField(max_length=20, blank=True, verbose_name=_("postcode"))
    city = models.CharField(max_length=100, blank=True, verbose_name=_("city"))
    region = models.CharField(
        max_length=100, blank=True, verbose_name=_("region or state")
    )
    country = models.CharField(max_length=100, blank=True, verbose_name=_("country"))

    class Meta:
        verbose_name = _("address")
        verbose_name_plural = _("addresses")
        db_table = "addresses"
        # A contact may have several addresses of one kind; they keep the
        # order they were written in, which is their ids' order.
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=AddressKind.values),
                name="address_kind_known",
            ),
        ]

    def __str__(self) -> str:
        return one_line_address(self.line1, self.postcode, self.city)


class PaperlessCorrespondent(HouseholdRow):
    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    paperless_id = models.PositiveIntegerField(verbose_name=_("Paperless ID"))
    name = models.CharField(max_length=300, verbose_name=_("name"))
    # fold_name(name), set by every write; find_known_provider searches it.
    folded_name = models.TextField(blank=True, editable=False)

    class Meta:
        verbose_name = _("paperless correspondent")
        verbose_name_plural = _("paperless correspondents")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "paperless_id"],
                name="paperless_correspondent_unique",
            ),
        ]
        indexes = [
            household_trigram_index("folded_name", "correspondent_name_trgm"),
        ]

    def __str__(self) -> str:
        return self.name


class PaperlessDocument(HouseholdRow):
    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    paperless_id = models.PositiveIntegerField(verbose_name=_("Paperless ID"))
    title = models.CharField(max_length=500, verbose_name=_("title"))
    correspondent = HouseholdForeignKey(
        PaperlessCorrespondent,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="documents",
        verbose_name=_("correspondent"),
    )
    created = models.DateField(null=True, blank=True, verbose_name=_("created"))
    # fold_name(title), set by every write; find_known_provider searches it.
    folded_title = models.TextField(blank=True, editable=False)

    class Meta:
        verbose_name = _("paperless document")
        verbose_name_plural = _("paperless documents")
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "paperless_id"],
                name="paperless_document_unique",
            ),
        ]
        indexes = [
            household_trigram_index("folded_title", "document_title_trgm"),
        ]

    def __str__(self) -> str:
        return self.title


class CardDavAccount(HouseholdRow):
    """The CardDAV address book a household's contacts are synced with.

    The password is stored encrypted (contacts.carddav.credentials) and never shown:
    `password_encrypted` is not editable, and no bundle section exports it.
    """

    household = models.OneToOneField(
        Household, on_delete=models.CASCADE, related_name="carddav_account"
    )
    url = models.URLField(
        "URL",
        max_length=1000,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text=_("The address book's URL, or the server's to find it from."),
    )
    username = models.CharField(_("user name"), max_length=200)
    password_encrypted = models.TextField(editable=False)
    address_book_url = models.URLField(
        _("address book URL"), max_length=1000, editable=False
    )
    vcard_version = models.CharField(
        _("card format (vCard version)"), max_length=3, default="4.0", editable=False
    )
    sync_token = models.TextField(blank=True, editable=False)
    last_synced_at = models.DateTimeField(
        _("last synced at"), null=True, blank=True, editable=False
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("CardDAV account")
        verbose_name_plural = _("CardDAV accounts")

    def __str__(self) -> str:
        return _("%(username)s at %(url)s") % {
            "username": self.username,
            "url": self.url,
        }


class CardDavCard(HouseholdRow):
    """A server card and the contact it is synced with, as of the last sync.

    `card` is the server's vCard as last read or written (kept properties
    come from it when Yorik writes the card again, and it is the server's
    side of a three-way comparison); `document` is the contact as it was
    then (contacts.documents.contact_document), Yorik's side. A contact
    deleted in Yorik leaves its row with no contact, so the card is not
    imported again.
    """

    household = models.ForeignKey(Household, on_delete=models.CASCADE)
    account = HouseholdForeignKey(
        CardDavAccount, on_delete=models.CASCADE, related_name="cards"
    )
    contact = HouseholdForeignKey(
        Contact,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="carddav_cards",
    )
    href = models.CharField(max_length=1000)
    etag = models.CharField(max_length=300)
    card = models.TextField()
    document = models.JSONField()

    class Meta:
        verbose_name = _("CardDAV card")
        verbose_name_plural = _("CardDAV cards")
        constraints = [
            models.UniqueConstraint(
                fields=["household", "account", "href"],
                name="carddav_card_href_unique",
            ),
            models.UniqueConstraint(
                fields=["household", "account", "contact"],
                name="carddav_card_contact_unique",
            ),
        ]

    def __str__(self) -> str:
        return self.href


class ContactMerge(HouseholdRow):
    """A contact merged into another: who did it, when, and what the merge chose.

    Keeps the merged-away contact's identifiers, so a vCard import or a card
    naming them finds the survivor instead of the contact that is gone.
    """

    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    survivor = HouseholdForeignKey(
        Contact,
        on_delete=models.CASCADE,
        related_name="merges",
        verbose_name=_("merged into"),
    )
    merged_contact_id = models.BigIntegerField(
        _("merged contact id"),
        null=True,
        blank=True,
        help_text=_("The id the merged contact had; empty after a bundle import."),
    )
    ref = models.CharField(_("ref"), max_length=64)
    vcard_uid = models.CharField(_("vCard UID"), max_length=255, blank=True)
    display_name = models.CharField(_("display name"), max_length=300)
    merged_by = models.CharField(_("merged by"), max_length=150, blank=True)
    merged_at = models.DateTimeField(_("merged at"))
    choices = models.JSONField(
        _("choices"),
        default=dict,
        blank=True,
        help_text=_("Which contact's value each field kept."),
    )

    class Meta:
        verbose_name = _("contact merge")
        verbose_name_plural = _("contact merges")
        ordering = ["merged_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "ref"], name="contact_merge_ref_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["household", "vcard_uid"]),
            models.Index(fields=["household", "merged_contact_id"]),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} → {self.survivor_id}"


class DismissedDuplicate(HouseholdRow):
    """Two contacts an admin said are not the same: never proposed again."""

    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    first = HouseholdForeignKey(
        Contact, on_delete=models.CASCADE, related_name="+", verbose_name=_("first")
    )
    second = HouseholdForeignKey(
        Contact, on_delete=models.CASCADE, related_name="+", verbose_name=_("second")
    )
    dismissed_by = models.CharField(_("dismissed by"), max_length=150, blank=True)
    dismissed_at = models.DateTimeField(_("dismissed at"))

    class Meta:
        verbose_name = _("dismissed duplicate")
        verbose_name_plural = _("dismissed duplicates")
        constraints = [
            models.UniqueConstraint(
                fields=["household", "first", "second"],
                name="dismissed_duplicate_unique",
            ),
            models.CheckConstraint(
                condition=models.Q(first__lt=models.F("second")),
                name="dismissed_duplicate_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.first_id} ≠ {self.second_id}"


class VCardUpload(HouseholdRow):
    """A vCard file an admin ran a dry run of, kept for one click to import it.

    `changes` is what the dry run listed (ImportSummary.changes): the import
    it confirms is written only when it changes exactly that.
    """

    household = models.ForeignKey(Household, on_delete=models.CASCADE, related_name="+")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    data = models.BinaryField()
    changes = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"vCard upload {self.pk} for {self.household}"
