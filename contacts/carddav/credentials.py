"""Secrets Yorik must send elsewhere (a CardDAV password), encrypted at rest.

Fernet (AES and HMAC, from `cryptography`) with a key derived from
SECRET_KEY by HKDF, so the database alone does not give the password away.
Changing SECRET_KEY makes stored secrets unreadable: they are set again.
"""

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.utils.translation import gettext


class UnreadableSecret(Exception):
    """The secret was stored under another SECRET_KEY."""


def _fernet() -> Fernet:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"yorik stored secret"
    ).derive(settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def encrypt_secret(secret: str) -> str:
    return _fernet().encrypt(secret.encode()).decode()


def decrypt_secret(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as error:
        raise UnreadableSecret(
            gettext(
                "The stored password cannot be read (DJANGO_SECRET_KEY changed "
                "since it was stored); set it again."
            )
        ) from error
