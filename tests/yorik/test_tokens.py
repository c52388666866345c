import hashlib

import pytest
from django.core.management import call_command

from yorik.models import ApiToken


def test_issue_token_prints_the_token_alone_on_its_last_line(admin_membership, capsys):
    call_command("issue_token", "anna")

    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert token.startswith("yk_")
    assert len(token) > 40


def test_only_a_hash_of_the_token_is_stored(admin_membership, capsys):
    call_command("issue_token", "anna")
    token = capsys.readouterr().out.strip().splitlines()[-1]

    stored = ApiToken.objects.get()
    assert stored.key_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {stored.key_hash, stored.prefix, stored.name}
    assert stored.profile == admin_membership.profile


def test_issue_token_warns_that_an_inactive_members_token_is_refused(
    admin_membership, capsys
):
    admin_membership.status = "paused"
    admin_membership.save()

    call_command("issue_token", "anna")

    assert "'anna' is no active member" in capsys.readouterr().err


def test_revoke_tokens_revokes_every_live_token(admin_membership, capsys):
    call_command("issue_token", "anna")
    call_command("issue_token", "anna")

    call_command("revoke_tokens", "anna")

    assert "Revoked 2 token(s)" in capsys.readouterr().out
    assert not ApiToken.objects.filter(revoked_at__isnull=True).exists()


@pytest.mark.django_db
def test_issue_token_for_an_unknown_login_fails():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No household member"):
        call_command("issue_token", "nobody")
