// Send a card's pick once: a double click would post a second pick, which the
// server refuses, and the refusal would replace the confirmation.
for (const form of document.querySelectorAll("form[data-pick-form]")) {
  form.addEventListener("submit", (event) => {
    if (form.dataset.sent) {
      event.preventDefault();
      return;
    }
    form.dataset.sent = "true";
    form.setAttribute("aria-busy", "true");
  });
}

// Filter a card's rows as the person types. The form still works without
// this script: submitted, it asks the server for the same search (?q=).
// Rows carry their folded text in data-search; the query is folded alike
// (people_search.engine.text.fold_name) and every term must appear in it.
const SPELLINGS = { "ß": "ss", "ẞ": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d" };

function fold(text) {
  return text
    .toLowerCase()
    .replace(/[ßẞæœøłđ]/g, (letter) => SPELLINGS[letter])
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/ae/g, "a")
    .replace(/oe/g, "o")
    .replace(/ue/g, "u");
}

for (const search of document.querySelectorAll("form[data-card-search]")) {
  const input = search.querySelector("input[type=search]");
  const status = search.querySelector("[data-search-status]");
  const empty = document.querySelector("[data-search-empty]");
  const rows = [...document.querySelectorAll("li.row[data-search]")];
  const filter = () => {
    const terms = fold(input.value).split(/[\s,]+/).filter(Boolean);
    let shown = 0;
    for (const row of rows) {
      const matches = terms.every((term) => row.dataset.search.includes(term));
      row.hidden = !matches;
      shown += matches ? 1 : 0;
    }
    // A heading, group or index letter with nothing left under it goes too.
    for (const group of document.querySelectorAll("[data-row-group]")) {
      group.hidden = !group.querySelector("li.row:not([hidden])");
    }
    for (const letter of document.querySelectorAll("[data-letter]")) {
      const section = document.getElementById(letter.dataset.letter)?.closest("[data-row-group]");
      letter.hidden = Boolean(section?.hidden);
    }
    if (empty) empty.hidden = shown > 0 || rows.length === 0;
    status.textContent = terms.length ? `${search.dataset.shownText} ${shown}` : "";
  };
  input.addEventListener("input", filter);
}
