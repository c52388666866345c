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
