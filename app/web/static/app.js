// loomsync pages: progressive enhancement only; every page works without it.
// The thread page: loads the next page of messages as its link scrolls into view, earlier
// pages on click, a whole message on "show all", and jumps to #m-N (loading the page that
// holds it when N is not on the loaded page, and opening the message's boxes).
"use strict";

(function () {
  const list = document.querySelector("section.messages[data-base]");
  if (!list) return;
  const base = list.dataset.base;
  const count = Number(list.dataset.count);
  const pageSize = Number(list.dataset.page);

  async function fragment(url) {
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) throw new Error(url + ": " + response.status);
    const template = document.createElement("template");
    template.innerHTML = await response.text();  // server-rendered, sanitized HTML
    return template.content;
  }

  async function loadInto(link, drop) {
    if (link.classList.contains("loading")) return;
    link.classList.add("loading");
    try {
      const content = await fragment(link.dataset.fragment);
      content.querySelectorAll(drop).forEach((node) => node.remove());
      // Earlier messages go above the reader: keep the first message they were reading where
      // it was on screen.
      const earlier = link.classList.contains("earlier");
      const mark = earlier ? link.nextElementSibling : null;
      const top = mark ? mark.getBoundingClientRect().top : 0;
      link.replaceWith(content);
      if (mark) keepInPlace(mark, top);
      watch();
    } catch (error) {
      failed(link, error);
    }
  }

  // Keep `mark` at `top` (px from the viewport's top) while the messages above it lay out:
  // content-visibility: auto sizes each one over the next frames as it nears the screen. The
  // one mechanism for this (app.css turns the browser's scroll anchoring off, which absorbed
  // some changes and not others, so the place was sometimes lost): on every frame, until the
  // position has held for six frames (at most 120 frames, about two seconds), scroll by
  // whatever moved `mark`. The reader's own scrolling or typing ends it at once.
  function keepInPlace(mark, top) {
    let steady = 0;
    let frames = 0;
    let stopped = false;
    const stop = () => { stopped = true; };
    const events = ["wheel", "touchstart", "keydown", "mousedown"];
    events.forEach((name) => window.addEventListener(name, stop, { once: true, passive: true }));
    const step = () => {
      if (stopped || !mark.isConnected) return;
      const moved = mark.getBoundingClientRect().top - top;
      if (Math.abs(moved) >= 1) {
        window.scrollBy(0, moved);
        steady = 0;
      } else {
        steady += 1;
      }
      frames += 1;
      if (steady < 6 && frames < 120) {
        requestAnimationFrame(step);
      } else {
        events.forEach((name) => window.removeEventListener(name, stop));
      }
    };
    step();
  }

  // A page that cannot load (the link was revoked, the session ended) says so on its link,
  // which stays a plain link: following it shows the error page.
  function failed(link, error) {
    link.classList.remove("loading");
    link.classList.add("failed");
    observer.unobserve(link);
    link.textContent = "Could not load (" + error.message.split(": ").pop() + "): open this link";
    delete link.dataset.fragment;
  }

  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) loadInto(entry.target, "a.pager.earlier");
    }
  }, { rootMargin: "800px 0px" });

  function watch() {
    list.querySelectorAll("a.pager.more").forEach((link) => observer.observe(link));
  }

  list.addEventListener("click", (event) => {
    const link = event.target.closest("a");
    if (!link || !link.dataset.fragment) return;
    event.preventDefault();
    if (link.classList.contains("earlier")) {
      loadInto(link, "a.pager.more");
    } else if (link.classList.contains("more")) {
      loadInto(link, "a.pager.earlier");
    } else if (link.classList.contains("show-all")) {
      showAll(link);
    }
  });

  async function showAll(link) {
    const message = link.closest("article.msg");
    link.classList.add("loading");
    try {
      const content = await fragment(link.dataset.fragment);
      // "Show all" asks to see the message: every box of it opens (one left closed showed
      // nothing happening), and the message stays where it was on screen.
      const whole = content.querySelector("article.msg");
      whole.querySelectorAll("details").forEach((d) => { d.open = true; });
      message.replaceWith(whole);
    } catch (error) {
      failed(link, error);
    }
  }

  // #m-N: show message N with its boxes open (a search hit may be inside a collapsed tool
  // output). Beyond the loaded messages, the page that holds N is fetched in place of this one
  // (one request of the fragment, not a reload of the whole page) and the address becomes
  // that page's ?from=, so a reload or a copied link opens it directly.
  function reveal(target) {
    for (let node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.querySelectorAll("details").forEach((d) => { d.open = true; });
    // Messages above it lay out (content-visibility) as they come near: it stays at the top.
    target.scrollIntoView();
    keepInPlace(target, target.getBoundingClientRect().top);
  }

  async function jump() {
    const match = /^#m-(\d+)$/.exec(location.hash);
    if (!match) return;
    const found = document.getElementById("m-" + match[1]);
    if (found) { reveal(found); return; }
    const seq = Number(match[1]);
    if (seq >= count) return;
    const start = seq - (seq % pageSize);
    try {
      const content = await fragment(base + "/messages?from=" + start);
      list.replaceChildren(content);
      history.replaceState(null, "", base + "?from=" + start + location.hash);
      watch();
      const target = document.getElementById("m-" + seq);
      if (target) reveal(target);
    } catch (error) {
      location.replace(base + "?from=" + start + location.hash);  // the server's page
    }
  }

  window.addEventListener("hashchange", jump);
  jump();
  watch();
})();
