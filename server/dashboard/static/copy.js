// A button with data-copy="<input id>" copies that input's text (the share link) and says so.
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach((button) => {
    const field = document.getElementById(button.dataset.copy);
    if (!field) return;
    const label = button.textContent;
    button.addEventListener("click", async () => {
      field.select();
      try {
        await navigator.clipboard.writeText(field.value);
      } catch (error) {
        document.execCommand("copy");
      }
      button.textContent = button.dataset.copied || label;
      window.setTimeout(() => { button.textContent = label; }, 2000);
    });
  });
})();
