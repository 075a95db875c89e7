// The review page's keys, for a reviewer working case after case (docs/review.md):
// J/K next or previous photo, V valid and X not valid on the current photo's first open choice,
// A approve and D disapprove (then the reason), Ctrl+Enter decide, N next case.
// Keys typed into a text box are the box's, except Ctrl+Enter.
(function () {
  "use strict";
  const form = document.querySelector("form.review-form");
  if (!form) return;
  const photos = Array.from(document.querySelectorAll("[data-photo]"));
  let current = 0;

  function open(photo) {
    return Array.from(photo.querySelectorAll("fieldset.decide")).filter(
      (group) => !group.querySelector("input[type=radio]:checked")
    );
  }
  function show(index) {
    if (!photos.length) return;
    current = Math.max(0, Math.min(photos.length - 1, index));
    photos.forEach((photo, i) => photo.classList.toggle("current", i === current));
    photos[current].scrollIntoView({ block: "start", behavior: "auto" });
    photos[current].focus({ preventScroll: true });
  }
  function choose(value) {
    const photo = photos[current];
    if (!photo) return;
    const group = open(photo)[0] || photo.querySelector("fieldset.decide");
    if (!group) return;
    const radio = group.querySelector("input[type=radio][value=" + value + "]");
    if (radio) radio.checked = true;
    if (!open(photo).length) {
      const next = photos.findIndex((other, i) => i > current && open(other).length);
      if (next >= 0) show(next);
    }
  }
  function verdict(value) {
    const radio = form.querySelector("input[name=veredict][value=" + value + "]");
    if (!radio) return;
    radio.checked = true;
    const reason = document.getElementById("reason");
    if (reason) reason.focus();
  }
  photos.forEach((photo, i) => photo.addEventListener("focusin", () => { current = i; }));
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      const decide = form.querySelector("button[value=decide]");
      if (decide) {
        event.preventDefault();
        form.requestSubmit(decide);
      }
      return;
    }
    const target = event.target;
    const typing = target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement ||
      (target instanceof HTMLInputElement && !["radio", "checkbox"].includes(target.type));
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    const next = document.querySelector("[data-next-case]");
    const actions = {
      j: () => show(current + 1),
      k: () => show(current - 1),
      v: () => choose("yes"),
      x: () => choose("no"),
      a: () => verdict("approved"),
      d: () => verdict("disapproved"),
      n: () => { if (next) window.location.assign(next.href); },
    };
    const action = actions[event.key.toLowerCase()];
    if (!action) return;
    event.preventDefault();
    action();
  });
})();
