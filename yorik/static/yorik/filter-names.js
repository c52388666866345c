// select2 draws an autocomplete filter's box as a textbox with no name of
// its own; give it the filter's name (its placeholder). Django's
// autocomplete.js draws the boxes when the document is ready, and ready
// callbacks run in the order they were registered: this one after it.
window.django.jQuery(() => {
  for (const select of document.querySelectorAll("form.autocomplete-filter select")) {
    const rendered = select.parentElement.querySelector(".select2-selection__rendered");
    if (rendered && select.dataset.placeholder) {
      rendered.setAttribute("aria-label", select.dataset.placeholder);
    }
  }
});
