"""The providers a household already uses: their categories and the search for them."""
