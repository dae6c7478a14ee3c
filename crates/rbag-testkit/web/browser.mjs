// Drives Debian's chromium headless through the DevTools protocol (playwright-core, which never
// downloads a browser): loads a page, runs steps, takes a screenshot, and reports every console
// error, page error and request that left loopback. rbag-testkit's `browser` module runs it.
//
//   node browser.mjs '{"url": "...", "screenshot": "out.png", "width": 1200, "height": 800,
//                      "steps": [{"waitFor": "js expr"}, {"select": ["#field", "/imu.x"]},
//                                {"click": "#btn"}, {"sleep": 200}],
//                      "evaluate": "js expr whose JSON value is returned"}'
import { createRequire } from "module";
const require = createRequire(process.env.RBAG_WEB_MODULES + "/");
const { chromium } = require("playwright-core");

const spec = JSON.parse(process.argv[2]);
const report = { errors: [], offsite: [], result: null };
const browser = await chromium.launch({
  executablePath: process.env.RBAG_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: spec.width || 1200, height: spec.height || 800 } });
  page.on("console", m => { if (m.type() === "error") report.errors.push("console: " + m.text()); });
  page.on("pageerror", e => report.errors.push("page: " + e.message));
  page.on("requestfailed", r => report.errors.push("request failed: " + r.url() + " " + (r.failure() || {}).errorText));
  // Nothing may be fetched from outside loopback (no CDN): such requests are refused and listed.
  await page.route("**/*", route => {
    const u = new URL(route.request().url());
    const local = u.protocol === "file:" || u.protocol === "data:" || ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);
    if (local) return route.continue();
    report.offsite.push(u.href);
    return route.abort();
  });
  await page.goto(spec.url, { waitUntil: "load", timeout: 30000 });
  for (const step of spec.steps || []) {
    if (step.waitFor) await page.waitForFunction(step.waitFor, null, { timeout: 30000 });
    if (step.select) await page.selectOption(step.select[0], step.select[1]);
    if (step.click) await page.click(step.click);
    if (step.fill) await page.fill(step.fill[0], step.fill[1]);
    if (step.sleep) await page.waitForTimeout(step.sleep);
  }
  if (spec.evaluate) report.result = await page.evaluate(spec.evaluate);
  if (spec.screenshot) await page.screenshot({ path: spec.screenshot, fullPage: !!spec.fullPage });
} catch (e) {
  report.errors.push("driver: " + (e && e.message ? e.message : String(e)));
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
