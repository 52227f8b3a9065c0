"use strict";
(function () {
  document.documentElement.setAttribute("data-js", "ready");
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function setOpen(open) { all("details.scenario").forEach(function (d) { d.open = open; }); }
  var ex = document.getElementById("expand"), co = document.getElementById("collapse");
  if (ex) { ex.addEventListener("click", function () { setOpen(true); }); }
  if (co) { co.addEventListener("click", function () { setOpen(false); }); }
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") { el.open = true; el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  all("button.copy").forEach(function (b) {
    b.addEventListener("click", function (ev) {
      ev.preventDefault();
      var text = b.getAttribute("data-copy") || "";
      var done = function () { b.textContent = "copied"; setTimeout(function () { b.textContent = "copy"; }, 1200); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () {});
      }
    });
  });
})();
