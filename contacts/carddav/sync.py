"""Keep a household's contacts and its CardDAV address book in step, both ways.

A run pulls, then pushes, then moves the sync token:

- Pull. The address book lists what changed since the stored sync token
  (`sync-collection`), or every card's ETag when it cannot. Cards whose ETag
  differs from the one last seen are fetched in batches. A card Yorik has
  not seen goes through the vCard importer (contacts.vcard.importer), so it is
  matched to a contact, created or merged exactly as a file import would do
  it. A card Yorik has seen is merged field by field with its contact (see
  below). A card gone from the server archives its contact.
- Push. Every contact whose fields differ from what the last sync left is
  written to its card with `If-Match` on the ETag last seen; a new contact
  (active or pending) becomes a new card with `If-None-Match: *`. The card is
  read, modified and written: the properties Yorik models are replaced with
  Yorik's export of the contact (contacts.vcard.exporter), every other line of
  the server's card (photo, relations, X- lines of other programs) is kept as
  it was. A 412 pulls that card again and tries once more.
- The sync token is stored only when everything above is done. Each card is
  written in its own transaction, so a fault (no connection, a timeout, a
  5xx) leaves every card not yet done as it was; the next run lists from the
  old token again and skips what is already done by its ETag.

Conflicts. Each synced card keeps the server's card and the contact as they
were after the last sync. Compared field by field with them (names, kind,
relation, status, notes, organization, job title, days, aliases, tags, web
addresses, addresses, and the channels of each kind), a field only the
server changed takes the server's value, a field only Yorik changed keeps
Yorik's (and is pushed), and a field both changed to
different values takes the server's, with Yorik's value added to the notes
and reported. A server card without X-YORIK-RELATION or X-YORIK-STATUS (a
phone may drop them) leaves those fields as they are. A card synced before
Yorik read LATER_KEYS is merged once more, so its contact gains them before
a push could drop them from the card.
"""

import hashlib
import re
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone, translation
from django.utils.text import format_lazy
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy
from tqdm import tqdm

from contacts.carddav.accounts import account_password, client_for
from contacts.carddav.card_text import empty_card, merge_card_text, with_uid
from contacts.carddav.client import (
    MULTIGET_BATCH,
    AddressBook,
    CardDavClient,
    CardDavError,
    CardRejected,
    Listing,
    PreconditionFailed,
    SyncTokenInvalid,
)
from contacts.carddav.credentials import UnreadableSecret
from contacts.documents import (
    DOCUMENT_KEYS,
    Document,
    changed_fields,
    contact_document,
    document_children,
    field_value,
    merge_documents,
    same_fields,
    take,
)
from contacts.models import (
    CardDavAccount,
    CardDavCard,
    ChannelKind,
    Contact,
    ContactKind,
    ContactStatus,
    one_line_address,
)
from contacts.services import update_contact
from contacts.vcard.exporter import contact_vcard
from contacts.vcard.importer import ADDRESS_BOOK_MODELS, import_vcards
from contacts.vcard.mapping import read_vcard
from household.models import Household
from yorik.statistics import analyze_after_commit

# Other programs' cards leave these out; an empty value there says nothing.
UNSAID_WHEN_EMPTY = ("relation", "status")
# The fields a synced document holds since the sync reads them from cards.
LATER_KEYS = ("organization", "title", "birthday", "anniversary", "urls")
# A field as a conflict line and the contact's notes name it.
FIELD_NAMES = {
    "display_name": pgettext_lazy("contact field", "name"),
    "first_name": pgettext_lazy("contact field", "first name"),
    "last_name": pgettext_lazy("contact field", "last name"),
    "kind": pgettext_lazy("contact field", "kind"),
    "relation": pgettext_lazy("contact field", "relation"),
    "status": pgettext_lazy("contact field", "status"),
    "notes": pgettext_lazy("contact field", "notes"),
    "organization": pgettext_lazy("contact field", "organization"),
    "title": pgettext_lazy("contact field", "job title"),
    "birthday": pgettext_lazy("contact field", "birthday"),
    "anniversary": pgettext_lazy("contact field", "anniversary"),
    "aliases": pgettext_lazy("contact field", "aliases"),
    "tags": pgettext_lazy("contact field", "tags"),
    "urls": pgettext_lazy("contact field", "web addresses"),
    "addresses": pgettext_lazy("contact field", "addresses"),
    **{
        f"channels.{kind}": format_lazy(gettext_lazy("{kind} ids"), kind=label)
        for kind, label in ChannelKind.choices
    },
    "channels.phone": pgettext_lazy("contact field", "phones"),
    "channels.email": pgettext_lazy("contact field", "emails"),
    "channels.other": pgettext_lazy("contact field", "other channels"),
}
# The first key of the advisory lock a running sync holds ("CDAV").
SYNC_LOCK = 0x43444156
# New cards imported at once: the importer loads the household once per call.
IMPORT_BATCH = 1000
# New contacts are pushed in these states; archived and spam ones stay home.
PUSHED_STATUSES = (ContactStatus.ACTIVE, ContactStatus.PENDING)
_SAFE_FILE_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,100}$")


@dataclass
class SyncReport:
    """What a run did; `error` says why it stopped early, if it did."""

    pulled: int = 0
    pushed: int = 0
    archived: int = 0
    conflicts: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    requests: int = 0
    cards_downloaded: int = 0
    error: str = ""

    def __str__(self) -> str:
        """Return the counts in the active language (the command's is English)."""
        return gettext(
            "pulled %(pulled)d, pushed %(pushed)d, conflicts %(conflicts)d, "
            "archived %(archived)d, skipped %(skipped)d"
        ) % {
            "pulled": self.pulled,
            "pushed": self.pushed,
            "conflicts": len(self.conflicts),
            "archived": self.archived,
            "skipped": len(self.skipped),
        }


# The sync


def sync_carddav(
    *, account: CardDavAccount, session: Any = None, show_progress: bool = False
) -> SyncReport:
    """Sync the account's household with its address book; see the module."""
    report = SyncReport()
    try:
        password = account_password(account)
    except UnreadableSecret as error:
        report.error = str(error)
        return report
    client = client_for(
        account.address_book_url,
        username=account.username,
        password=password,
        time_limit=settings.YORIK_CARDDAV_SYNC_DEADLINE,
        session=session,
    )
    with _only_run(account) as alone:
        if not alone:
            report.error = gettext("another sync of this household is running")
            return report
        # A run that ended while this one waited moved the token.
        account.refresh_from_db()
        try:
            _Sync(account, client, report, show_progress=show_progress).run()
        except CardDavError as error:
            report.error = str(error)
    report.requests = client.traffic["requests"]
    report.cards_downloaded = client.traffic["cards"]
    return report


@contextmanager
def _only_run(account: CardDavAccount) -> Iterator[bool]:
    """Hold a PostgreSQL advisory lock on the account while a sync runs.

    A cron run and the admin action at once would both push the same
    contacts; the second finds the lock taken and stops at once.
    """
    key = (SYNC_LOCK, account.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        alone = cursor.fetchone()[0]
    try:
        yield alone
    finally:
        if alone:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def _contacts(household: Household) -> Any:
    """The household's contacts with their children in id order, as exported."""
    return Contact.objects.filter(household=household).prefetch_related(
        *document_children()
    )


class _Sync:
    def __init__(
        self,
        account: CardDavAccount,
        client: CardDavClient,
        report: SyncReport,
        *,
        show_progress: bool,
    ) -> None:
        self.account = account
        self.household = account.household
        self.client = client
        self.report = report
        self.show_progress = show_progress
        self.book = account.address_book_url
        self.states = {
            state.href: state
            for state in CardDavCard.objects.filter(
                account=account, household=self.household
            )
        }

    def _progress(self, total: int, desc: str) -> tqdm:
        return tqdm(
            total=total,
            desc=desc,
            unit="card",
            file=sys.stderr,
            disable=not self.show_progress or total == 0,
        )

    def run(self) -> None:
        book = self.client.describe(self.book)
        listing, full = self._listing(book)
        if full:
            gone = [href for href in self.states if href not in listing.etags]
        else:
            gone = [href for href in listing.deleted if href in self.states]
        changed = [
            href
            for href, etag in listing.etags.items()
            if href not in self.states or self.states[href].etag != etag
        ]
        self._catch_up(
            [state for href, state in self.states.items() if href not in changed]
        )
        self._pull(changed)
        for href in gone:
            self._archive(self.states.pop(href))
        self._push()
        self.account.sync_token = listing.token
        self.account.last_synced_at = timezone.now()
        self.account.save(update_fields=["sync_token", "last_synced_at", "updated_at"])

    def _listing(self, book: AddressBook) -> tuple[Listing, bool]:
        """Return the listing and whether it holds every card of the book."""
        if not book.supports_sync:
            return self.client.all_etags(self.book), True
        token = self.account.sync_token
        try:
            return self.client.changes_since(self.book, token), not token
        except SyncTokenInvalid:
            return self.client.changes_since(self.book, ""), True

    # Pull

    def _pull(self, hrefs: list[str]) -> None:
        """Fetch the changed cards; merge known ones, import new ones in batches.

        The importer loads the household's contacts once per call, so new
        cards are gathered and imported IMPORT_BATCH at a time.
        """
        new: list[tuple[str, str, str]] = []
        with self._progress(len(hrefs), "CardDAV pull") as progress:
            for start in range(0, len(hrefs), MULTIGET_BATCH):
                batch = hrefs[start : start + MULTIGET_BATCH]
                cards = self.client.fetch(self.book, batch)
                for href, (etag, text) in cards.items():
                    if href in self.states:
                        self._merge(self.states[href], etag, text)
                    else:
                        new.append((href, etag, text))
                if len(new) >= IMPORT_BATCH:
                    self._import(new)
                    new = []
                progress.update(len(batch))
        self._import(new)
        analyze_after_commit(
            [CardDavCard, *ADDRESS_BOOK_MODELS], household_id=self.household.pk
        )

    def _merge(self, state: CardDavCard, etag: str, text: str) -> None:
        """Merge a changed card into its contact, in one transaction."""
        server, problem = read_vcard(text, household=self.household)
        if problem:
            self.report.skipped.append(f"{state.href}: {problem}")
            return
        if state.contact_id is None:
            # Deleted in Yorik: the card stays on the server, untouched.
            state.etag, state.card = etag, text
            state.save(update_fields=["etag", "card"])
            return
        try:
            with transaction.atomic():
                conflict = self._merge_into_contact(state, etag, text, server)
        except ValidationError as error:
            self.report.skipped.append(f"{state.href}: {' '.join(error.messages)}")
            return
        if conflict:
            self.report.conflicts.append(conflict)
        self.report.pulled += 1

    def _catch_up(self, states: list[CardDavCard]) -> None:
        """Give contacts what their unchanged cards hold that Yorik did not read.

        A card synced before Yorik kept LATER_KEYS and every address was read
        without them: its contact lacks the card's company, days, web
        addresses and further addresses, and a push would remove them from
        the card. Each such card is merged once more, as if the server had
        just added them.
        """
        for state in states:
            if state.contact_id is None or all(
                key in state.document for key in LATER_KEYS
            ):
                continue
            server, problem = read_vcard(state.card, household=self.household)
            if problem:
                continue
            as_read_before = {
                **server,
                **{key: type(server[key])() for key in LATER_KEYS},
                "addresses": state.document["addresses"],
            }
            with transaction.atomic():
                conflict = self._merge_into_contact(
                    state, state.etag, state.card, server, base_server=as_read_before
                )
            if conflict:
                self.report.conflicts.append(conflict)

    def _merge_into_contact(
        self,
        state: CardDavCard,
        etag: str,
        text: str,
        server: dict[str, Any],
        *,
        base_server: Document | None = None,
    ) -> str:
        """Write the merged contact and the card's state; return the conflict.

        The server's side is compared with `base_server`, by default the
        card as last synced read now.
        """
        contact = (
            _contacts(self.household)
            .select_for_update(of=("self",))
            .get(pk=state.contact_id)
        )
        current = contact_document(contact)
        if base_server is None:
            base_server, problem = read_vcard(state.card, household=self.household)
            if problem:
                base_server = state.document
        merged, conflicts = merge_fields(
            base_server=base_server,
            server=server,
            base=state.document,
            current=current,
        )
        if conflicts:
            # The notes are stored: they are written in the household's
            # language, whoever runs the sync.
            with translation.override(self.household.language):
                merged["notes"] = _with_conflict_notes(
                    merged["notes"], current, conflicts
                )
        if not same_fields(merged, current):
            update_contact(contact=contact, **merged)
        state.etag, state.card = etag, text
        state.document = _as_synced(server)
        state.save(update_fields=["etag", "card", "document"])
        if not conflicts:
            return ""
        names = ", ".join(str(FIELD_NAMES.get(key, key)) for key in conflicts)
        return f"{contact.display_name}: {names}"

    def _import(self, cards: list[tuple[str, str, str]]) -> None:
        """Import cards Yorik has not seen, matched as a vCard file's would be."""
        linked_uids = set(
            Contact.objects.filter(
                household=self.household,
                carddav_cards__account=self.account,
            ).values_list("vcard_uid", flat=True)
        )
        readable: list[tuple[str, str, str, dict[str, Any]]] = []
        for href, etag, text in cards:
            card, problem = read_vcard(text, household=self.household)
            if problem:
                self.report.skipped.append(f"{href}: {problem}")
                continue
            uid = card["vcard_uid"]
            if not uid:
                # The importer and the sync know a card by its UID.
                uid = card["vcard_uid"] = _uid_for(href)
                text = with_uid(text, uid)
            if uid in linked_uids:
                self.report.skipped.append(
                    gettext("%(card)s: has the UID of another card of the address book")
                    % {"card": href}
                )
                continue
            linked_uids.add(uid)
            readable.append((href, etag, text, card))
        if not readable:
            return
        with transaction.atomic():
            summary = import_vcards(
                household=self.household,
                data="".join(text for _, _, text, _ in readable).encode(),
            )
            created: list[CardDavCard] = []
            contacts = {
                contact.vcard_uid: contact
                for contact in Contact.objects.filter(
                    household=self.household,
                    vcard_uid__in=[card["vcard_uid"] for *_, card in readable],
                )
            }
            for number, (href, etag, text, card) in enumerate(readable, start=1):
                contact = contacts.get(card["vcard_uid"])
                if contact is None:
                    problem = summary.skipped_cards.get(
                        number, gettext("the importer skipped it")
                    )
                    self.report.skipped.append(f"{href}: {problem}")
                    continue
                created.append(
                    self._remember(contact, href, etag, text, _as_synced(card))
                )
            CardDavCard.objects.bulk_create(created)
            self.report.pulled += len(created)

    def _remember(
        self,
        contact: Contact,
        href: str,
        etag: str,
        text: str,
        document: dict[str, Any],
    ) -> CardDavCard:
        """Return the unsaved sync state of a card now linked to its contact."""
        self.states[href] = CardDavCard(
            household=self.household,
            account=self.account,
            contact=contact,
            href=href,
            etag=etag,
            card=text,
            document=document,
        )
        return self.states[href]

    def _archive(self, state: CardDavCard) -> None:
        """Archive the contact of a card deleted on the server; never delete it."""
        with transaction.atomic():
            if state.contact_id is not None:
                Contact.objects.filter(
                    household=self.household, pk=state.contact_id
                ).exclude(status=ContactStatus.ARCHIVED).update(
                    status=ContactStatus.ARCHIVED, updated_at=timezone.now()
                )
                self.report.archived += 1
            state.delete()

    # Push

    def _push(self) -> None:
        by_contact = {
            state.contact_id: state
            for state in self.states.values()
            if state.contact_id is not None
        }
        todo = []
        for contact in _contacts(self.household).exclude(status=ContactStatus.SPAM):
            document = contact_document(contact)
            state = by_contact.get(contact.pk)
            if state is None:
                if contact.status in PUSHED_STATUSES:
                    todo.append((contact, document, None))
            elif not same_fields(document, state.document):
                todo.append((contact, document, state))
        with self._progress(len(todo), "CardDAV push") as progress:
            for contact, document, state in todo:
                if state is None:
                    self._create_card(contact, document)
                else:
                    self._update_card(contact, document, state, retry=True)
                progress.update()

    def _create_card(self, contact: Contact, document: dict[str, Any]) -> None:
        if not contact.vcard_uid:
            contact.vcard_uid = f"yorik-{uuid.uuid4()}"
            Contact.objects.filter(pk=contact.pk).update(vcard_uid=contact.vcard_uid)
        name = contact.vcard_uid
        if not _SAFE_FILE_NAME.match(name):
            name = hashlib.sha256(name.encode()).hexdigest()[:32]
        href = f"{urlsplit(self.book).path.rstrip('/')}/{name}.vcf"
        text = merge_card_text(
            empty_card(self.account.vcard_version), self._ours(contact)
        )
        try:
            etag = self.client.put(self.book, href, text, etag=None)
        except (PreconditionFailed, CardRejected) as error:
            self.report.skipped.append(f"{contact.display_name}: {error}")
            return
        self._remember(contact, href, etag, text, document).save()
        self.report.pushed += 1

    def _update_card(
        self,
        contact: Contact,
        document: dict[str, Any],
        state: CardDavCard,
        *,
        retry: bool,
    ) -> None:
        text = merge_card_text(state.card, self._ours(contact))
        try:
            etag = self.client.put(self.book, state.href, text, etag=state.etag)
        except CardRejected as error:
            self.report.skipped.append(f"{contact.display_name}: {error}")
            return
        except PreconditionFailed as error:
            if not retry:
                self.report.skipped.append(
                    gettext("%(contact)s: %(error)s, again")
                    % {"contact": contact.display_name, "error": error}
                )
                return
            self._pull_again(state)
            return
        state.etag, state.card, state.document = etag, text, document
        state.save(update_fields=["etag", "card", "document"])
        self.report.pushed += 1

    def _pull_again(self, state: CardDavCard) -> None:
        """After a 412: merge the server's card, then push what is left once."""
        fetched = self.client.fetch(self.book, [state.href])
        if state.href not in fetched:
            self.report.skipped.append(
                gettext("%(card)s: deleted on the server meanwhile")
                % {"card": state.href}
            )
            return
        self._merge(state, *fetched[state.href])
        contact = _contacts(self.household).get(pk=state.contact_id)
        document = contact_document(contact)
        if not same_fields(document, state.document):
            self._update_card(contact, document, state, retry=False)

    def _ours(self, contact: Contact) -> str:
        return contact_vcard(contact, language=self.household.language)


# Fields


def merge_fields(
    *,
    base_server: Document,
    server: Document,
    base: Document,
    current: Document,
) -> tuple[Document, list[str]]:
    """Return the contact merged field by field, and the fields both changed.

    base_server and server are the card as last synced and now, base and
    current the contact (current holds Yorik's side of each conflict). A
    field the server changed takes the server's value.
    """
    theirs = [
        key
        for key in changed_fields(base_server, server)
        if key not in UNSAID_WHEN_EMPTY or field_value(server, key)
    ]
    ours = set(changed_fields(base, current, fields=theirs))
    conflicts = [
        key
        for key in theirs
        if key in ours and field_value(current, key) != field_value(server, key)
    ]
    return merge_documents(current, server, dict.fromkeys(theirs, take)), conflicts


def _as_synced(card: dict[str, Any]) -> dict[str, Any]:
    """Return the contact as the card says it, for the next comparison.

    Where the contact differs from it (a relation the card does not carry,
    a field only Yorik changed), the next push writes the contact's value.
    """
    synced = {key: card[key] for key in DOCUMENT_KEYS}
    synced["status"] = card["status"] or ContactStatus.ACTIVE
    return synced


def _shown(document: dict[str, Any], key: str) -> str:
    if key.startswith("channels."):
        kind = key.removeprefix("channels.")
        return ", ".join(
            f"{c['value']} ({c['label']})" if c["label"] else c["value"]
            for c in document["channels"]
            if c["kind"] == kind
        )
    if key == "addresses":
        return "; ".join(
            one_line_address(a["line1"], a["postcode"], a["city"])
            for a in document["addresses"]
        )
    if key in ("aliases", "tags", "urls"):
        return ", ".join(document[key])
    choices = {"kind": ContactKind, "status": ContactStatus}.get(key)
    if choices is not None and document[key] in choices.values:
        return str(choices(document[key]).label)
    return str(document[key])


def _with_conflict_notes(
    notes: str, current: dict[str, Any], conflicts: list[str]
) -> str:
    """Return the notes with Yorik's side (current's) of each conflict added.

    In the active language; the caller picks the household's.
    """
    day = timezone.localdate().isoformat()
    lines = [
        gettext("Yorik's %(field)s before the CardDAV sync of %(day)s: %(value)s")
        % {
            "field": FIELD_NAMES.get(key, key),
            "day": day,
            "value": _shown(current, key) or gettext("(empty)"),
        }
        for key in conflicts
    ]
    return "\n\n".join(part for part in (notes, "\n".join(lines)) if part)


def _uid_for(href: str) -> str:
    return f"carddav-{hashlib.sha256(href.encode()).hexdigest()[:32]}"
