// The transcript import form: pasted text larger than a request may carry is refused by
// the server (413, and the paste is gone); say so before sending, and keep the paste.
"use strict";
(function () {
  const form = document.getElementById("transcript-import-form");
  if (!form) return;
  const paste = form.querySelector("textarea.transcript-paste");
  const warning = form.querySelector(".transcript-paste-warning");
  const limit = Number(form.dataset.pasteMaxBytes || 0);
  if (!paste || !warning || !limit) return;
  form.addEventListener("submit", function (event) {
    const size = new Blob([paste.value]).size;
    if (size <= limit) return;
    event.preventDefault();
    warning.hidden = false;
    warning.textContent = "The pasted text is larger than " + form.dataset.pasteMaxSize +
      ": save it to a file and choose the file instead. Nothing was sent.";
    paste.focus();
  });
})();
