// Copy buttons, the portal's only script: each button[data-copy] copies the
// value (or text) of the element it names. Without JavaScript the buttons
// stay hidden and the text stays selectable; the Content-Security-Policy
// allows this file and nothing inline.
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var target = document.getElementById(button.getAttribute("data-copy"));
    var text = "value" in target ? target.value : target.textContent;
    navigator.clipboard.writeText(text).then(function () {
      button.textContent = "Copied";
    });
  });
});
