/*
 * Live Markdown preview on the summary page (summaries/admin/preview.py).
 *
 * Below each Markdown textarea of the summary's parts (chapter and key point bodies,
 * takeaway and caveat texts, rows added later included) a box shows the text as readers
 * will get it. While the editor types, the text is POSTed (debounced) to the admin's
 * preview endpoint, which answers with the HTML the saved part will have: rendered and
 * sanitised on the server by the same function, so nothing unsafe is ever inserted here.
 * The endpoint and the fields come from this script's data- attributes.
 *
 * A box appears when its field is first seen on screen (a folded chapter's when it is
 * opened) and shows the text as it is, so the saved text's rendering until the editor
 * types; links the save would refuse (a javascript: link) are named below it.
 */
(function () {
    "use strict";

    var script = document.currentScript;
    var endpoint = script && script.dataset.previewUrl;
    var fields = ((script && script.dataset.previewFields) || "").split(/\s+/).filter(Boolean);
    var DELAY_MS = 400;
    // A row's field: "<prefix>-<row number>-<field>"; the template row ("__prefix__") never.
    var NAME = /^(.+)-\d+-([^-]+)$/;

    if (!endpoint || !fields.length) {
        return;
    }

    function fieldOf(textarea) {
        var match = NAME.exec(textarea.name || "");
        if (!match) {
            return null;
        }
        var field = match[1] + "-" + match[2];
        return fields.indexOf(field) === -1 ? null : field;
    }

    function csrfToken(textarea) {
        var form = textarea.form || document;
        var input = form.querySelector("input[name=csrfmiddlewaretoken]");
        return input ? input.value : "";
    }

    function box(textarea) {
        if (textarea.previewBox) {
            return textarea.previewBox;
        }
        var wrapper = document.createElement("div");
        wrapper.className = "markdown-live-preview";
        var label = document.createElement("p");
        label.className = "markdown-live-preview-label";
        label.textContent = "Live preview, as readers will see it once saved:";
        var output = document.createElement("div");
        output.className = "markdown-preview";
        output.setAttribute("aria-live", "polite");
        var problems = document.createElement("ul");
        problems.className = "errorlist markdown-live-preview-problems";
        problems.hidden = true;
        wrapper.appendChild(label);
        wrapper.appendChild(output);
        wrapper.appendChild(problems);
        // Below the field: outside the flex row that puts a stacked field beside its label.
        var anchor = textarea.closest(".flex-container") || textarea;
        anchor.insertAdjacentElement("afterend", wrapper);
        textarea.previewBox = {output: output, problems: problems, timer: null, sent: 0, shown: null};
        return textarea.previewBox;
    }

    function showProblems(preview, problems) {
        preview.problems.textContent = "";
        (problems || []).forEach(function (problem) {
            var item = document.createElement("li");
            item.textContent = "Saving will refuse this: " + problem;
            preview.problems.appendChild(item);
        });
        preview.problems.hidden = !(problems && problems.length);
    }

    function show(preview, html, error) {
        if (error) {
            preview.output.textContent = error;
            preview.output.classList.add("errornote");
        } else {
            // Sanitised by the server (summaries.text.markdown.render_markdown).
            preview.output.innerHTML = html;
            preview.output.classList.remove("errornote");
        }
    }

    function render(textarea) {
        var field = fieldOf(textarea);
        if (!field) {
            return;
        }
        var preview = box(textarea);
        var text = textarea.value;
        if (text === preview.shown) {
            return;
        }
        var request = ++preview.sent;
        var body = new URLSearchParams({field: field, text: text});
        fetch(endpoint, {
            method: "POST",
            credentials: "same-origin",
            headers: {"X-CSRFToken": csrfToken(textarea)},
            body: body
        })
            .then(function (response) {
                return response.json().catch(function () {
                    return {error: "The preview is not available (HTTP " + response.status + ")."};
                });
            })
            .then(function (data) {
                if (request !== preview.sent) {
                    return; // a later keystroke's answer is on its way
                }
                preview.shown = data.error ? null : text;
                show(preview, data.html || "", data.error);
                showProblems(preview, data.problems);
            })
            .catch(function () {
                if (request === preview.sent) {
                    show(preview, "", "The preview is not available (no connection).");
                }
            });
    }

    function schedule(textarea) {
        var preview = box(textarea);
        window.clearTimeout(preview.timer);
        preview.timer = window.setTimeout(function () {
            render(textarea);
        }, DELAY_MS);
    }

    function previewed(target) {
        return target instanceof HTMLTextAreaElement && fieldOf(target) !== null;
    }

    document.addEventListener("input", function (event) {
        if (previewed(event.target)) {
            schedule(event.target);
        }
    });
    // Once the editor is in a text, show what it looks like now (not again if unchanged).
    document.addEventListener("focusin", function (event) {
        if (previewed(event.target)) {
            render(event.target);
        }
    });

    // A box, showing the text as it is, once its field is on screen: not one request per
    // part when the page opens, and none for folded parts until they are opened.
    var watcher = window.IntersectionObserver
        ? new IntersectionObserver(function (entries) {
              entries.forEach(function (entry) {
                  if (entry.isIntersecting) {
                      watcher.unobserve(entry.target);
                      render(entry.target);
                  }
              });
          })
        : null;

    function addBoxes(root) {
        root.querySelectorAll("textarea").forEach(function (textarea) {
            if (previewed(textarea) && textarea.value.trim()) {
                if (watcher) {
                    watcher.observe(textarea);
                }
            }
        });
    }

    // Rows added with "Add another …" get their box when they appear.
    document.addEventListener("formset:added", function (event) {
        addBoxes(event.target);
    });
    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", function () {
            addBoxes(document);
        });
    } else {
        addBoxes(document);
    }
})();
