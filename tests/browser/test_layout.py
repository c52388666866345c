"""Card rows and the leads list hold their layout on phones from 320 to 430 px."""

import pytest

from tests.browser.conftest import log_in
from tests.builders import build_contact, build_lead
from yorik.cards import card_link, create_card, pick_contact

pytestmark = pytest.mark.browser

PHONES = [{"width": 390, "height": 844}, {"width": 320, "height": 640}]
LONG_EMAIL = "t.mueller.dresden@example.com"

# The tops of the lines a substring of an element's text is laid out on; the
# substring may span text nodes (an email split by <wbr>).
LINES_OF = """([selector, text]) => {
  const element = document.querySelector(selector);
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const nodes = [];
  let whole = "";
  while (walker.nextNode()) {
    nodes.push([walker.currentNode, whole.length]);
    whole += walker.currentNode.data;
  }
  const start = whole.indexOf(text);
  if (start < 0) return 0;
  const end = start + text.length;
  const at = (offset) => {
    const [node, from] = nodes.findLast(([, from]) => from <= offset);
    return [node, offset - from];
  };
  const range = document.createRange();
  range.setStart(...at(start));
  range.setEnd(...at(end - 1));
  range.setEnd(range.endContainer, range.endOffset + 1);
  const tops = [...range.getClientRects()].map((rect) => Math.round(rect.top));
  return new Set(tops).size;
}"""


def assert_no_sideways_scrolling(page):
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= page.evaluate("innerWidth")


def width_of(locator):
    return locator.evaluate("element => element.getBoundingClientRect().width")


@pytest.mark.parametrize("viewport", PHONES, ids=["390", "320"])
def test_badges_wrap_under_the_name_and_the_email_stays_whole(
    page, household, admin_membership, screenshot, viewport
):
    contact = build_contact(
        household,
        "Thomas Müller",
        kind="business",
        relation="Steuerberater",
        channels=[{"kind": "email", "value": LONG_EMAIL}],
    )
    card = create_card(
        household=household,
        kind="contact_picker",
        payload={
            "query": "Müller",
            "ranked": False,
            "picks": [{"contact_id": contact.pk, "confidence": None, "reason": ""}],
        },
        created_by=admin_membership.profile,
    )
    pick_contact(card=card, contact_id=contact.pk)
    page.set_viewport_size(viewport)

    page.goto(card_link(card))

    row = page.locator(".row-action").first
    assert row.locator(".badge").count() == 2
    assert_no_sideways_scrolling(page)
    assert width_of(row.locator(".row-text")) >= 0.4 * width_of(row)
    assert page.evaluate(LINES_OF, [".row-subtitle", LONG_EMAIL]) == 1
    screenshot(page, f"contact_picker_long_email_{viewport['width']}")


@pytest.fixture
def long_lead_list(household, admin_membership):
    """Forty leads with long names and three badges each; the targeted one last."""
    for number in range(40):
        build_lead(
            household,
            "Maximiliane",
            last_name=f"Hohenzollern-Sigmaringen {number:02}",
            email=f"maximiliane.hohenzollern.{number:02}@example.com",
            status="contacted",
            archived=True,
            owner=admin_membership,
        )
    return build_lead(
        household,
        "Zora",
        last_name="Zimmermann-Wolkenstein",
        email=LONG_EMAIL,
        owner=admin_membership,
    )


@pytest.mark.parametrize("viewport", PHONES, ids=["390", "320"])
def test_the_targeted_lead_is_scrolled_into_view(
    page, long_lead_list, screenshot, viewport
):
    page.set_viewport_size(viewport)
    log_in(page, "anna")

    page.goto(f"/de/dashboard/leads?lead={long_lead_list.pk}")

    target = page.locator(f"#lead-{long_lead_list.pk}")
    assert target.locator("[aria-current=true]").count() == 1
    page.wait_for_function(
        """(id) => {
          const top = document.getElementById(id).getBoundingClientRect().top;
          return top >= 0 && top < innerHeight;
        }""",
        arg=f"lead-{long_lead_list.pk}",
    )
    assert_no_sideways_scrolling(page)
    screenshot(page, f"leads_targeted_{viewport['width']}")


@pytest.mark.parametrize("viewport", PHONES, ids=["390", "320"])
def test_lead_names_wrap_at_words_not_letters(
    page, long_lead_list, screenshot, viewport
):
    page.set_viewport_size(viewport)
    log_in(page, "anna")

    page.goto("/de/dashboard/leads")

    titles = page.locator(".row-title")
    assert titles.count() == 41
    for title in (titles.first, titles.last):
        height, line = title.evaluate(
            """element => [element.getBoundingClientRect().height,
                           parseFloat(getComputedStyle(element).lineHeight)]"""
        )
        assert height < 3 * line
    assert_no_sideways_scrolling(page)
