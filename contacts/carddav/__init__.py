"""CardDAV: a household's address book on a server, kept in step with Yorik."""
