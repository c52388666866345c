"""Given names and their nicknames: English from `nicknames`, German curated here."""

import csv

import pytest

from people_search.engine.nicknames import GERMAN_NICKNAMES, name_variants, names_agree


@pytest.mark.parametrize(
    ("name", "nickname"),
    [
        ("Johannes", "Hans"),
        ("Josef", "Sepp"),
        ("Ursula", "Uschi"),
        ("Friedrich", "Fritz"),
        ("Katharina", "Kathi"),
        ("Elisabeth", "Liesel"),
        ("Bernhard", "Bernd"),
        ("Robert", "Bob"),
        ("Elizabeth", "Liz"),
        ("William", "Bill"),
    ],
)
def test_names_and_nicknames_find_each_other(name, nickname):
    assert name_variants(nickname) >= {name.lower()}
    assert name_variants(name) >= {nickname.lower()}


def test_variants_are_folded_so_every_spelling_finds_them():
    assert "georg" in name_variants("Jürgen")
    assert "georg" in name_variants("Juergen")
    assert "kathe" in name_variants("KATHARINA")


def test_a_word_that_is_no_given_name_has_no_variants():
    assert name_variants("Oma") == frozenset()
    assert name_variants("Klempner") == frozenset()


def test_the_german_list_names_its_source_and_has_150_pairs_or_more():
    lines = GERMAN_NICKNAMES.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))

    assert any("Source:" in line for line in header)
    assert len(rows) >= 150
    assert all(row["name"] and row["variant"] for row in rows)
    assert len({(row["name"], row["variant"]) for row in rows}) == len(rows)


@pytest.mark.parametrize(
    ("one", "other", "agree"),
    [
        ("Gisela Becker", "Hans Becker", False),
        ("Hans Becker", "Johannes Becker", True),
        ("Hans Schulz", "Johannes Schulz", True),
        ("Becker Hans", "Hans Becker", True),
        ("Müller Thomas", "Thomas Mueller", True),
        ("H. Becker", "Hans Becker", True),
        ("Hans", "Hans Becker", True),
        ("Hans Becker", "Hans Bäcker", False),
        ("Oma", "Gisela Becker", False),
        ("Bob Smith", "Robert Smith", True),
        ("", "Hans Becker", False),
    ],
)
def test_names_agree_only_on_family_name_and_given_name_or_its_nicknames(
    one, other, agree
):
    assert names_agree(one, other) is agree
    assert names_agree(other, one) is agree
