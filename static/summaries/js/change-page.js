/*
 * The summary page at the size of a real summary (templates/admin/summaries/summary/
 * change_form.html). Progressive enhancement: without this script every part stays open
 * and the form works as it is.
 *
 * - Key points and chapters fold to one line each (title, time, counts) and open on demand;
 *   rows with errors and rows added now stay open. "Open all" / "Fold all" per section.
 * - "Move up" / "Move down" buttons on every row, saved or new, number the rows' hidden
 *   positions in the order shown (what the drag and drop of adminsortable2 does too).
 * - A caveat's "Qualifies" chooser names new rows by what is typed in them.
 * - Unsaved edits: leaving the page with changes asks first (beforeunload), and the form is
 *   kept as a draft in localStorage, keyed by the summary and the version it was opened
 *   at, offered back after a crash or a lost session; a successful save (a new version)
 *   drops older drafts.
 */
(function () {
    "use strict";

    var script = document.currentScript;
    var summaryId = (script && script.dataset.summary) || "";
    var form = document.getElementById("summary_form");
    if (!form) {
        return;
    }
    var FOLDED = ["key_points", "chapters"];
    var ORDERED = ["key_points", "takeaways", "chapters", "caveats"];
    var DRAFT_PREFIX = "curation:draft:" + summaryId + ":";
    var AUTOSAVE_MS = 1500;
    var live = document.createElement("p");
    live.className = "visually-hidden";
    live.setAttribute("aria-live", "polite");
    form.appendChild(live);

    function announce(text) {
        live.textContent = text;
    }

    function rowsOf(prefix) {
        var group = document.getElementById(prefix + "-group");
        if (!group) {
            return [];
        }
        var selector = group.querySelector("table") ? "tbody > tr.form-row" : ".inline-related";
        return Array.prototype.filter.call(group.querySelectorAll(selector), function (row) {
            return !row.classList.contains("empty-form") && /-\d+$/.test(row.id);
        });
    }

    function field(row, name) {
        return row.querySelector("[name$='-" + name + "']");
    }

    // --- Folding ---------------------------------------------------------------------

    function words(text) {
        var trimmed = text.trim();
        return trimmed ? trimmed.split(/\s+/).length : 0;
    }

    function summaryLine(prefix, row) {
        var title = field(row, "title");
        var time = field(row, prefix === "chapters" ? "start_time" : "time");
        var body = field(row, "body");
        var text = body ? body.value : "";
        var links = (text.match(/\]\(\s*https?:/gi) || []).length;
        var parts = [(title && title.value.trim()) || "(new, empty)"];
        if (time && time.value.trim()) {
            parts.push(time.value.trim());
        }
        parts.push(words(text) + " words");
        if (links) {
            parts.push(links + (links === 1 ? " link" : " links"));
        }
        return parts.join(" · ");
    }

    function setOpen(row, open) {
        var fieldset = row.querySelector("fieldset");
        var toggle = row.querySelector(".part-toggle");
        if (!fieldset || !toggle) {
            return;
        }
        fieldset.hidden = !open;
        toggle.setAttribute("aria-expanded", open ? "true" : "false");
        row.classList.toggle("part-folded", !open);
        if (open) {
            row.dispatchEvent(new CustomEvent("part:opened", {bubbles: true}));
        }
    }

    function addToggle(prefix, row, open) {
        var heading = row.querySelector("h3");
        if (!heading || heading.querySelector(".part-toggle")) {
            return;
        }
        var toggle = document.createElement("button");
        toggle.type = "button";
        toggle.className = "part-toggle";
        var fieldset = row.querySelector("fieldset");
        if (fieldset) {
            fieldset.id = fieldset.id || row.id + "-fields";
            toggle.setAttribute("aria-controls", fieldset.id);
        }
        toggle.textContent = summaryLine(prefix, row);
        toggle.addEventListener("click", function () {
            setOpen(row, toggle.getAttribute("aria-expanded") !== "true");
        });
        row.addEventListener("input", function () {
            toggle.textContent = summaryLine(prefix, row);
        });
        var label = heading.querySelector(".inline_label");
        (label || heading).insertAdjacentElement(label ? "afterend" : "beforeend", toggle);
        setOpen(row, open);
    }

    function addFoldAll(prefix) {
        var group = document.getElementById(prefix + "-group");
        var heading = group && group.querySelector("h2");
        if (!heading) {
            return;
        }
        [["Open all", true], ["Fold all", false]].forEach(function (pair) {
            var button = document.createElement("button");
            button.type = "button";
            button.className = "part-fold-all";
            button.textContent = pair[0];
            button.setAttribute("aria-label", pair[0] + " " + heading.textContent.trim().toLowerCase());
            button.addEventListener("click", function () {
                rowsOf(prefix).forEach(function (row) {
                    setOpen(row, pair[1]);
                });
            });
            heading.appendChild(button);
        });
    }

    // --- Ordering --------------------------------------------------------------------

    function renumber(prefix) {
        rowsOf(prefix).forEach(function (row, index) {
            var position = field(row, "position");
            if (position) {
                position.value = String(index + 1);
            }
        });
    }

    function rowName(prefix, row) {
        var title = field(row, "title") || field(row, "text");
        var kind = {key_points: "Key point", takeaways: "Takeaway", chapters: "Chapter", caveats: "Caveat"}[prefix];
        var words = title && title.value.trim() ? title.value.trim().slice(0, 40) : "new row";
        return kind + " “" + words + "”";
    }

    function move(prefix, row, step) {
        var rows = rowsOf(prefix);
        var index = rows.indexOf(row);
        var other = rows[index + step];
        if (!other) {
            announce(rowName(prefix, row) + " is already " + (step < 0 ? "first." : "last."));
            return;
        }
        other.insertAdjacentElement(step < 0 ? "beforebegin" : "afterend", row);
        renumber(prefix);
        markDirty();
        announce(rowName(prefix, row) + " moved to place " + (index + step + 1) + " of " + rows.length + ".");
    }

    function addMoveButtons(prefix, row) {
        if (row.querySelector(".part-move")) {
            return;
        }
        var holder = document.createElement("span");
        holder.className = "part-move";
        [["Move up", -1, "↑"], ["Move down", 1, "↓"]].forEach(function (spec) {
            var button = document.createElement("button");
            button.type = "button";
            button.className = "part-move-button";
            button.textContent = spec[2];
            button.title = spec[0];
            button.addEventListener("click", function () {
                move(prefix, row, spec[1]);
                button.focus();
            });
            holder.appendChild(button);
        });
        function label() {
            holder.querySelectorAll("button").forEach(function (button) {
                button.setAttribute("aria-label", button.title + ": " + rowName(prefix, row));
            });
        }
        label();
        row.addEventListener("input", label);
        // A stacked row's heading; a table row's last cell (its first holds the row's name,
        // laid over the row's top by Django's styles).
        var place = row.querySelector("h3") || row.lastElementChild;
        place.appendChild(holder);
    }

    // --- A caveat's chooser names new rows by what is typed in them --------------------

    var NEW_LABEL = {key_points: "New key point", takeaways: "New takeaway", chapters: "New chapter"};

    function newRowOptions() {
        var options = {};
        ["key_points", "takeaways", "chapters"].forEach(function (prefix) {
            rowsOf(prefix).forEach(function (row) {
                var id = field(row, "id");
                if (id && id.value) {
                    return; // a saved part: listed by the server
                }
                var index = row.id.replace(/^.*-/, "");
                var text = field(row, "title") || field(row, "text");
                var words = text && text.value.trim() ? ": " + text.value.trim().slice(0, 32) : " (empty row)";
                options["new:" + prefix + ":" + index] = {prefix: prefix, label: NEW_LABEL[prefix] + words};
            });
        });
        return options;
    }

    function refreshTargets() {
        var wanted = newRowOptions();
        document.querySelectorAll("select[name^='caveats-'][name$='-target']").forEach(function (select) {
            Array.prototype.forEach.call(select.options, function (option) {
                if (option.value.indexOf("new:") === 0 && !(option.value in wanted)) {
                    if (!option.selected) {
                        option.remove();
                    }
                }
            });
            Object.keys(wanted).forEach(function (value) {
                var option = select.querySelector("option[value='" + value + "']");
                if (!option) {
                    option = document.createElement("option");
                    option.value = value;
                    var groups = select.querySelectorAll("optgroup");
                    var group = groups[["chapters", "key_points", "takeaways"].indexOf(wanted[value].prefix)];
                    (group || select).appendChild(option);
                }
                option.textContent = wanted[value].label;
            });
        });
    }

    // --- Unsaved edits -----------------------------------------------------------------

    var dirty = false;
    var submitting = false;
    var timer = null;

    function lockVersion() {
        var input = form.querySelector("[name=expected_lock_version]");
        return input ? input.value : "";
    }

    function draftKey(version) {
        return DRAFT_PREFIX + version;
    }

    function editable(element) {
        if (!element.name || element.disabled || element.name.indexOf("__prefix__") !== -1) {
            return false;
        }
        if (element.type === "hidden" || element.type === "submit" || element.type === "button") {
            return false;
        }
        return element.name !== "csrfmiddlewaretoken";
    }

    function snapshot() {
        var fields = {};
        Array.prototype.forEach.call(form.elements, function (element) {
            if (!editable(element)) {
                return;
            }
            fields[element.name] = element.type === "checkbox" ? element.checked : element.value;
        });
        return fields;
    }

    var opened = null;

    function saveDraft() {
        if (!summaryId || !window.localStorage) {
            return;
        }
        try {
            window.localStorage.setItem(
                draftKey(lockVersion()),
                JSON.stringify({savedAt: new Date().toISOString(), fields: snapshot()})
            );
        } catch (error) {
            // Storage full or refused (private mode): the beforeunload warning still applies.
        }
    }

    function markDirty() {
        dirty = true;
        window.clearTimeout(timer);
        timer = window.setTimeout(saveDraft, AUTOSAVE_MS);
    }

    function differs(fields) {
        return Object.keys(fields).some(function (name) {
            return name in opened && opened[name] !== fields[name];
        });
    }

    function restore(fields) {
        Array.prototype.forEach.call(form.elements, function (element) {
            if (!editable(element) || !(element.name in fields)) {
                return;
            }
            if (element.type === "checkbox") {
                element.checked = Boolean(fields[element.name]);
            } else {
                element.value = fields[element.name];
            }
            element.dispatchEvent(new Event("input", {bubbles: true}));
        });
    }

    function clock(iso) {
        var when = new Date(iso);
        var pad = function (n) {
            return (n < 10 ? "0" : "") + n;
        };
        var today = new Date().toDateString() === when.toDateString();
        var time = pad(when.getHours()) + ":" + pad(when.getMinutes());
        return today ? time : when.toLocaleDateString() + " " + time;
    }

    function offerDraft() {
        if (!summaryId || !window.localStorage) {
            return;
        }
        var version = lockVersion();
        var draft = null;
        for (var i = window.localStorage.length - 1; i >= 0; i--) {
            var key = window.localStorage.key(i);
            if (!key || key.indexOf(DRAFT_PREFIX) !== 0) {
                continue;
            }
            if (key === draftKey(version)) {
                try {
                    draft = JSON.parse(window.localStorage.getItem(key));
                } catch (error) {
                    draft = null;
                }
            } else if (Number(key.slice(DRAFT_PREFIX.length)) < Number(version)) {
                window.localStorage.removeItem(key); // saved since: a newer version exists
            }
        }
        if (!draft || !draft.fields || !differs(draft.fields)) {
            return;
        }
        var banner = document.createElement("div");
        banner.className = "draft-offer";
        banner.setAttribute("role", "region");
        banner.setAttribute("aria-label", "Unsaved edits");
        var text = document.createElement("p");
        text.textContent = "Restore your unsaved edits from " + clock(draft.savedAt) + "?";
        var yes = document.createElement("button");
        yes.type = "button";
        yes.className = "button";
        yes.textContent = "Restore them";
        var no = document.createElement("button");
        no.type = "button";
        no.className = "button";
        no.textContent = "Discard them";
        yes.addEventListener("click", function () {
            restore(draft.fields);
            banner.remove();
            markDirty();
            announce("Your unsaved edits were restored. Save to keep them.");
        });
        no.addEventListener("click", function () {
            window.localStorage.removeItem(draftKey(version));
            banner.remove();
        });
        text.appendChild(document.createTextNode(" "));
        text.appendChild(yes);
        text.appendChild(document.createTextNode(" "));
        text.appendChild(no);
        banner.appendChild(text);
        form.insertAdjacentElement("beforebegin", banner);
    }

    // --- Wiring ------------------------------------------------------------------------

    function enhanceRow(prefix, row, open) {
        if (FOLDED.indexOf(prefix) !== -1) {
            addToggle(prefix, row, open);
        }
        addMoveButtons(prefix, row);
    }

    function start() {
        opened = snapshot();
        ORDERED.forEach(function (prefix) {
            rowsOf(prefix).forEach(function (row) {
                // Open: rows with errors, and the empty rows, where new parts are typed.
                var id = field(row, "id");
                var isNew = !id || !id.value;
                enhanceRow(prefix, row, isNew || row.querySelector(".errorlist") !== null);
            });
            if (FOLDED.indexOf(prefix) !== -1) {
                addFoldAll(prefix);
            }
        });
        refreshTargets();
        offerDraft();
        form.addEventListener("input", function (event) {
            if (event.target && editable(event.target)) {
                markDirty();
            }
            if (event.target && /^(key_points|takeaways|chapters)-\d+-(title|text)$/.test(event.target.name || "")) {
                refreshTargets();
            }
        });
        form.addEventListener("change", function (event) {
            if (event.target && editable(event.target)) {
                markDirty();
            }
        });
        form.addEventListener("submit", function () {
            submitting = true;
            window.clearTimeout(timer);
            saveDraft(); // kept until the save succeeds (a new version drops it)
        });
        window.addEventListener("beforeunload", function (event) {
            if (dirty && !submitting) {
                event.preventDefault();
                event.returnValue = "";
            }
        });
        // Rows added with "Add another …" (Django's inlines.js): open, movable, and named
        // in the caveats' choosers.
        document.addEventListener("formset:added", function (event) {
            var prefix = event.detail && event.detail.formsetName;
            if (ORDERED.indexOf(prefix) !== -1) {
                enhanceRow(prefix, event.target, true);
                renumber(prefix);
                refreshTargets();
            }
        });
        document.addEventListener("formset:removed", function (event) {
            var prefix = event.detail && event.detail.formsetName;
            if (ORDERED.indexOf(prefix) !== -1) {
                renumber(prefix);
                refreshTargets();
            }
        });
    }

    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", start);
    } else {
        start();
    }
})();
