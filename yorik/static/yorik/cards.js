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
// Rows carry their folded text in data-search; the query is folded alike,
// in step with people_search.engine.text.fold_name (its letter spellings
// first, then marks, case and German umlaut spellings), and every term must
// appear in it.
const SPELLINGS = [
  [/[ßẞ]/g, "ss"],
  [/[æÆ]/g, "ae"],
  [/[œŒ]/g, "oe"],
  [/[øØ]/g, "o"],
  [/[łŁ]/g, "l"],
  [/[đĐð]/g, "d"],
  [/þ/g, "th"],
  [/ı/g, "i"],
  [/[\u2018\u2019`\u00b4]/g, "'"],
];

function fold(text) {
  let folded = text;
  for (const [letters, spelling] of SPELLINGS) {
    folded = folded.replace(letters, spelling);
  }
  return folded
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replaceAll("ae", "a")
    .replaceAll("oe", "o")
    .replaceAll("ue", "u");
}

for (const search of document.querySelectorAll("form[data-card-search]")) {
  const input = search.querySelector("input[type=search]");
  const status = search.querySelector("[data-search-status]");
  const empty = document.querySelector("[data-search-empty]");
  const rows = [...document.querySelectorAll("li.row[data-search]")];
  const filter = () => {
    const terms = input.value.split(/[\s,]+/).map(fold).filter(Boolean);
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
    // A card whose server search left no rows keeps saying so.
    if (empty && rows.length) empty.hidden = shown > 0;
    if (status) status.textContent = terms.length ? `${search.dataset.shownText} ${shown}` : "";
  };
  input.addEventListener("input", filter);
}
