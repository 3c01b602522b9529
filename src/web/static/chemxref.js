// Copy buttons of the compound page: shown only when the browser can copy (the page works without this).
document.addEventListener('DOMContentLoaded', () => {
  if (!navigator.clipboard) return;
  for (const button of document.querySelectorAll('button.copy')) {
    button.hidden = false;
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(button.dataset.copy).then(
        () => {
          const label = button.textContent;
          button.textContent = 'Copied';
          setTimeout(() => {
            button.textContent = label;
          }, 1500);
        },
        () => {
          button.textContent = 'Copy failed';
        },
      );
    });
  }
});
