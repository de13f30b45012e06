// The signature pad of the signing page: what a finger, a pen or a mouse
// draws on the canvas is kept as strokes of points on a 600 by 200 grid
// (internal/drawing's text) and sent with the form, which signs all the
// same without it. No request of its own: the form's plain POST carries it.
(function () {
  "use strict";
  var W = 600, H = 200, MAX_POINTS = 3000, MAX_STROKES = 100;
  var block = document.getElementById("pad-block");
  var canvas = document.getElementById("pad");
  var field = document.getElementById("drawing");
  var form = document.getElementById("sign");
  if (!block || !canvas || !field || !form || !canvas.getContext) {
    return;
  }
  block.hidden = false;
  var ctx = canvas.getContext("2d");
  ctx.lineWidth = 4;
  ctx.lineCap = "round";
  ctx.lineJoin = "round";
  ctx.strokeStyle = "#141e6e";
  var strokes = [], current = null, points = 0;

  function at(e) {
    var r = canvas.getBoundingClientRect();
    var x = Math.round((e.clientX - r.left) * W / r.width);
    var y = Math.round((e.clientY - r.top) * H / r.height);
    return [Math.min(W, Math.max(0, x)), Math.min(H, Math.max(0, y))];
  }
  function add(p) {
    var last = current[current.length - 1];
    if (last && Math.abs(last[0] - p[0]) + Math.abs(last[1] - p[1]) < 2) {
      return;
    }
    if (points >= MAX_POINTS) {
      return;
    }
    points++;
    current.push(p);
    ctx.beginPath();
    if (last) {
      ctx.moveTo(last[0], last[1]);
    } else {
      ctx.moveTo(p[0], p[1]);
    }
    ctx.lineTo(p[0], p[1] + (last ? 0 : 0.01));
    ctx.stroke();
  }
  canvas.addEventListener("pointerdown", function (e) {
    if (strokes.length >= MAX_STROKES) {
      return;
    }
    e.preventDefault();
    if (canvas.setPointerCapture) {
      canvas.setPointerCapture(e.pointerId);
    }
    current = [];
    strokes.push(current);
    add(at(e));
  });
  canvas.addEventListener("pointermove", function (e) {
    if (current) {
      e.preventDefault();
      add(at(e));
    }
  });
  function end() {
    if (current && current.length === 0) {
      strokes.pop();
    }
    current = null;
  }
  canvas.addEventListener("pointerup", end);
  canvas.addEventListener("pointercancel", end);
  document.getElementById("pad-clear").addEventListener("click", function () {
    strokes = [];
    current = null;
    points = 0;
    ctx.clearRect(0, 0, W, H);
  });
  form.addEventListener("submit", function () {
    field.value = strokes.map(function (s) {
      return s.map(function (p) { return p[0] + "," + p[1]; }).join(" ");
    }).join(";");
  });
})();
