"""The tenant and its people: households, user profiles, memberships, leads, events."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Upper
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from phonenumbers import SUPPORTED_REGIONS

from people_search.engine.phones import InvalidPhoneNumber, parse_phone
from yorik.indexes import as_bigint, household_trigram_index
from yorik.tenancy import HouseholdForeignKey, HouseholdRow


def validate_region(value: str) -> None:
    if value not in SUPPORTED_REGIONS:
        raise ValidationError(
            _("%(value)s is not an ISO country code phonenumbers knows."),
            params={"value": value},
        )


class Language(models.TextChoices):
    GERMAN = "de", "Deutsch"
    ENGLISH = "en", "English"


class Household(models.Model):
    slug = models.SlugField(max_length=64, unique=True, verbose_name=_("slug"))
    name = models.CharField(max_length=200, verbose_name=_("name"))
    default_region = models.CharField(
        max_length=2,
        default="DE",
        validators=[validate_region],
        help_text=_("ISO country used to read phone numbers written without +."),
        verbose_name=_("default region"),
    )
    language = models.CharField(
        max_length=2,
        choices=Language.choices,
        default=Language.GERMAN,
        verbose_name=_("language"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("household")
        verbose_name_plural = _("households")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(language__in=Language.values),
                name="household_language_known",
            ),
            models.CheckConstraint(
                condition=models.Q(default_region=Upper("default_region")),
                name="household_region_upper_case",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class PhoneNormalizingModel(HouseholdRow):
    """A row with a `phone` stored as E.164 and its national significant digits."""

    phone = models.CharField(
        max_length=20,
        blank=True,
        help_text=_("Stored as E.164."),
        verbose_name=_("phone"),
    )
    phone_nsn = models.CharField(max_length=17, blank=True, editable=False)

    class Meta:
        abstract = True

    def clean(self) -> None:
        super().clean()
        self.normalize_phone()

    def normalize_phone(self) -> None:
        """Store the phone as E.164, or raise a ValidationError naming the field."""
        if not self.phone:
            self.phone_nsn = ""
            return
        if self.household_id is None:  # Reported as a missing household instead.
            return
        try:
            number = parse_phone(self.phone, self.household.default_region)
        except InvalidPhoneNumber as error:
            raise ValidationError({"phone": str(error)}) from error
        self.phone, self.phone_nsn = number.e164, number.nsn


class UserProfile(PhoneNormalizingModel):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="profiles",
        verbose_name=_("household"),
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="profile",
        help_text=_("The login of this person; empty for managed profiles."),
        verbose_name=_("user"),
    )
    username = models.CharField(
        max_length=150,
        validators=[RegexValidator(r"^[\w.@+-]+\Z")],
        help_text=_("The person's handle: their login name when they have a login."),
        verbose_name=_("username"),
    )
    first_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("first name")
    )
    last_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("last name")
    )
    email = models.EmailField(blank=True, verbose_name=_("email"))
    language = models.CharField(
        _("preferred language"),
        max_length=2,
        choices=Language.choices,
        blank=True,
        help_text=_(
            "The language pages, cards and the admin speak to this person; "
            "empty: the household's."
        ),
    )
    deleted_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("deleted at")
    )
    sort_name = models.CharField(max_length=300, default="", editable=False)
    search_text = models.TextField(blank=True, editable=False)
    match_text = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("user profile")
        verbose_name_plural = _("user profiles")
        db_table = "user_profiles"
        ordering = ["first_name", "last_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["household", "username"], name="profile_username_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(phone="")
                | models.Q(phone__regex=r"^\+[1-9][0-9]{1,14}$"),
                name="profile_phone_e164",
            ),
            models.CheckConstraint(
                condition=models.Q(language="")
                | models.Q(language__in=Language.values),
                name="profile_language_known",
            ),
        ]
        indexes = [
            household_trigram_index("search_text", "profile_search_trgm"),
            household_trigram_index("phone_nsn", "profile_phone_trgm"),
        ]

    def __str__(self) -> str:
        return self.full_name or self.username

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


class Role(models.TextChoices):
    ADMIN = "admin", _("Admin")
    MEMBER = "member", _("Member")
    CHILD = "child", _("Child")
    EMPLOYEE = "employee", _("Employee")
    VIEWER = "viewer", _("Viewer")


class MembershipStatus(models.TextChoices):
    ACTIVE = "active", _("Active")
    PENDING = "pending", _("Pending")
    PAUSED = "paused", _("Paused")
    CANCELLED = "cancelled", _("Cancelled")
    REMOVED = "removed", _("Removed")


class LeadAccess(models.TextChoices):
    NONE = "none", pgettext_lazy("lead access", "None")
    OWN = "own", _("Own leads")
    ALL = "all", _("All leads")


class Tier(models.TextChoices):
    """What a caller may do with skills, derived from the membership role."""

    ADMIN = "admin"
    MEMBER = "member"
    RESTRICTED = "restricted"


class MembershipQuerySet(models.QuerySet["Membership"]):
    def live(self, *, household: Household | None = None) -> "MembershipQuerySet":
        """Return the memberships that count: not removed, profile not deleted.

        A membership counts only in its profile's own household. Given a
        household, it is named on both sides so that the planner reads this
        household's profiles, not every household's (docs/performance.md,
        "The household on both sides of a membership").
        """
        if household is None:
            in_own_household = models.Q(household=models.F("profile__household"))
        else:
            in_own_household = models.Q(
                household=household, profile__household_id=as_bigint(household.pk)
            )
        return self.filter(in_own_household, profile__deleted_at__isnull=True).exclude(
            status=MembershipStatus.REMOVED
        )

    def acting(self, *, household: Household | None = None) -> "MembershipQuerySet":
        """Return the live memberships that may act: those whose status is active.

        The one rule every surface asks (API and MCP tokens, pages, card links,
        admin): pending, paused and cancelled members are still listed as
        people of the household, but nothing is done in their name.
        """
        return self.live(household=household).filter(status=MembershipStatus.ACTIVE)


class Membership(HouseholdRow):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("household"),
    )
    profile = models.ForeignKey(
        UserProfile,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("profile"),
    )
    role = models.CharField(
        max_length=16, choices=Role.choices, default=Role.MEMBER, verbose_name=_("role")
    )
    status = models.CharField(
        max_length=16,
        choices=MembershipStatus.choices,
        default=MembershipStatus.ACTIVE,
        verbose_name=_("status"),
    )
    lead_access = models.CharField(
        max_length=8,
        choices=LeadAccess.choices,
        default=LeadAccess.NONE,
        verbose_name=_("lead access"),
    )
    monthly_token_allowance = models.PositiveIntegerField(
        default=1_000_000,
        help_text=_("Model tokens the assistant may spend for this person each month."),
        verbose_name=_("monthly token allowance"),
    )
    # Whether the member taught Yorik words of their own (people_search's
    # PersonalWord): find_person reads them only then, and costs nothing more
    # for everyone else.
    has_personal_words = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(
                fields=["household", "profile"], name="membership_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="membership_role_known"
            ),
            models.CheckConstraint(
                condition=models.Q(status__in=MembershipStatus.values),
                name="membership_status_known",
            ),
            models.CheckConstraint(
                condition=models.Q(lead_access__in=LeadAccess.values),
                name="membership_lead_access_known",
            ),
        ]
        indexes = [models.Index(fields=["household", "status"])]

    def __str__(self) -> str:
        return f"{self.profile} ({self.get_role_display()})"

    def clean(self) -> None:
        super().clean()
        if self.profile_id and self.household_id != self.profile.household_id:
            raise ValidationError(
                {"profile": _("The person belongs to another household.")}
            )

    @property
    def acts(self) -> bool:
        """Return whether this live membership may act (MembershipQuerySet.acting)."""
        return self.status == MembershipStatus.ACTIVE

    @property
    def tier(self) -> Tier:
        return {Role.ADMIN: Tier.ADMIN, Role.MEMBER: Tier.MEMBER}.get(
            self.role, Tier.RESTRICTED
        )


class LeadStatus(models.TextChoices):
    NEW = "new", _("New")
    CONTACTED = "contacted", _("Contacted")
    QUALIFIED = "qualified", _("Qualified")
    WON = "won", _("Won")
    LOST = "lost", _("Lost")


class Lead(PhoneNormalizingModel):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="leads",
        verbose_name=_("household"),
    )
    first_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("first name")
    )
    last_name = models.CharField(
        max_length=150, blank=True, verbose_name=_("last name")
    )
    email = models.EmailField(blank=True, verbose_name=_("email"))
    status = models.CharField(
        max_length=16,
        choices=LeadStatus.choices,
        default=LeadStatus.NEW,
        verbose_name=_("status"),
    )
    archived = models.BooleanField(default=False, verbose_name=_("archived"))
    owner = models.ForeignKey(
        Membership,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="owned_leads",
        verbose_name=_("owner"),
    )
    sort_name = models.CharField(max_length=300, default="", editable=False)
    search_text = models.TextField(blank=True, editable=False)
    match_text = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("lead")
        verbose_name_plural = _("leads")
        ordering = ["first_name", "last_name"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=LeadStatus.values),
                name="lead_status_known",
            ),
            models.CheckConstraint(
                condition=models.Q(phone="")
                | models.Q(phone__regex=r"^\+[1-9][0-9]{1,14}$"),
                name="lead_phone_e164",
            ),
        ]
        indexes = [
            household_trigram_index("search_text", "lead_search_trgm"),
            household_trigram_index("phone_nsn", "lead_phone_trgm"),
            models.Index(fields=["household", "owner"]),
        ]

    def __str__(self) -> str:
        return self.full_name or self.email or f"Lead {self.pk}"

    def clean(self) -> None:
        super().clean()
        if self.owner_id and self.owner.household_id != self.household_id:
            raise ValidationError(
                {"owner": _("The owner belongs to another household.")}
            )

    @property
    def full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


class CalendarEvent(HouseholdRow):
    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="calendar_events",
        verbose_name=_("household"),
    )
    title = models.CharField(max_length=300, verbose_name=_("title"))
    starts_at = models.DateTimeField(verbose_name=_("starts at"))
    ends_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ends at"))
    location = models.CharField(max_length=300, blank=True, verbose_name=_("location"))
    source_uid = models.CharField(
        max_length=300,
        blank=True,
        help_text=_("Where an imported event came from (iCalendar UID and start)."),
        verbose_name=_("source UID"),
    )
    attendees = models.ManyToManyField(
        UserProfile,
        through="EventAttendee",
        blank=True,
        related_name="calendar_events",
        verbose_name=_("attendees"),
    )
    # fold_name(title), set by every write; find_known_provider searches it.
    folded_title = models.TextField(blank=True, editable=False)

    class Meta:
        verbose_name = _("calendar event")
        verbose_name_plural = _("calendar events")
        ordering = ["-starts_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__isnull=True)
                | models.Q(ends_at__gte=models.F("starts_at")),
                name="event_ends_after_start",
            ),
            models.UniqueConstraint(
                fields=["household", "source_uid"],
                condition=~models.Q(source_uid=""),
                name="event_source_uid_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["household", "starts_at"]),
            household_trigram_index("folded_title", "event_title_trgm"),
        ]

    def __str__(self) -> str:
        return self.title


class EventAttendee(HouseholdRow):
    """A member who attends a calendar event."""

    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    calendarevent = HouseholdForeignKey(
        CalendarEvent, on_delete=models.CASCADE, verbose_name=_("calendar event")
    )
    userprofile = models.ForeignKey(
        UserProfile, on_delete=models.CASCADE, verbose_name=_("attendee")
    )

    class Meta:
        db_table = "household_calendarevent_attendees"
        verbose_name = _("attendee")
        verbose_name_plural = _("attendees")
        constraints = [
            models.UniqueConstraint(
                fields=["household", "calendarevent", "userprofile"],
                name="event_attendee_unique",
            ),
        ]

    def __str__(self) -> str:
        return str(self.userprofile)


class Conversation(HouseholdRow):
    """A chat of one member with the assistant."""

    household = models.ForeignKey(
        Household,
        on_delete=models.CASCADE,
        related_name="conversations",
        verbose_name=_("household"),
    )
    membership = models.ForeignKey(
        Membership,
        on_delete=models.CASCADE,
        related_name="conversations",
        verbose_name=_("membership"),
    )
    title = models.CharField(max_length=200, blank=True, verbose_name=_("title"))
    turn_count = models.PositiveIntegerField(default=0, verbose_name=_("turn count"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")
        indexes = [models.Index(fields=["household", "membership"])]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class ModelUsage(HouseholdRow):
    """Model tokens the assistant spent on a member's behalf."""

    household = models.ForeignKey(
        Household, on_delete=models.CASCADE, verbose_name=_("household")
    )
    membership = models.ForeignKey(
        Membership,
        on_delete=models.CASCADE,
        related_name="model_usage",
        verbose_name=_("membership"),
    )
    conversation = HouseholdForeignKey(
        Conversation,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        verbose_name=_("conversation"),
    )
    tokens = models.PositiveIntegerField(verbose_name=_("tokens"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("model usage")
        verbose_name_plural = _("model usage")
        indexes = [models.Index(fields=["membership", "created_at"])]

    def __str__(self) -> str:
        return f"{self.tokens} tokens"
