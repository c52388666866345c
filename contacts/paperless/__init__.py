"""The household's mirror of Paperless-ngx correspondents and documents."""
