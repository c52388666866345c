"""Template tags for what Yorik learned from a pick on a card."""

from django import template

from people_search.models import PersonalWord
from people_search.personal_words import lesson_of_card
from yorik.models import Card

register = template.Library()


@register.simple_tag
def pick_lesson(card: Card) -> PersonalWord | None:
    """Return what the card's pick taught its creator and is still remembered."""
    return lesson_of_card(card)
