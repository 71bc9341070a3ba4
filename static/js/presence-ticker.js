// presence.js's clock, in a worker: a background tab's own timers are throttled to one
// wake-up a minute by the browser, a worker's are not, so an open tab keeps heartbeating.
var timer = null;
onmessage = function (event) {
  clearInterval(timer);
  timer = event.data > 0 ? setInterval(function () { postMessage("tick"); }, event.data) : null;
};
