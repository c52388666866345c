"""vCard files: read them, import them into an address book, export one."""
