// Bring the row a link points at (marked aria-current) into view: the page
// opens at its top, and the row may be far down a long list.
const current = document.querySelector('.row [aria-current="true"]');
if (current) {
  current.closest(".row").scrollIntoView({ block: "center" });
}
