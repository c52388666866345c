// Filter a long card's rows as the person types, without loading the page
// again. Without this script the search is a plain GET form (?q=) and the
// server answers with the same rows: each row's data-search holds its text
// folded as the server folds it (people_search.engine.text.fold_name), and
// the typed words are folded the same way here.
const SPELLINGS = [
  [/[ßẞ]/g, "ss"],
  [/[æÆ]/g, "ae"],
  [/[œŒ]/g, "oe"],
  [/[øØ]/g, "o"],
  [/[łŁ]/g, "l"],
  [/[đĐð]/g, "d"],
  [/þ/g, "th"],
  [/ı/g, "i"],
];

function fold(text) {
  let folded = text;
  for (const [letter, spelling] of SPELLINGS) {
    folded = folded.replace(letter, spelling);
  }
  return folded
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replaceAll("ae", "a")
    .replaceAll("oe", "o")
    .replaceAll("ue", "u");
}

for (const form of document.querySelectorAll("form[data-row-search]")) {
  const input = form.querySelector('input[type="search"]');
  const rows = [...document.querySelectorAll("li[data-search]")];
  const empty = document.querySelector("[data-row-search-empty]");
  const filter = () => {
    const terms = input.value.split(/[\s,]+/).map(fold).filter(Boolean);
    for (const row of rows) {
      row.hidden = !terms.every((term) => row.dataset.search.includes(term));
    }
    for (const list of new Set(rows.map((row) => row.parentElement))) {
      list.hidden = ![...list.children].some((row) => !row.hidden);
    }
    empty.hidden = rows.some((row) => !row.hidden);
  };
  input.addEventListener("input", filter);
  // The rows are filtered already: a submit would only load the same rows.
  form.addEventListener("submit", (event) => event.preventDefault());
  form.querySelector('button[type="submit"]').hidden = true;
}
