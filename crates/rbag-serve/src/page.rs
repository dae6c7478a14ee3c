//! rbag's own quick-look page, on the WebSocket port: every plain HTTP request (not a WebSocket
//! upgrade) comes here as `respond(method, path, &shared)`.
//!
//! The page is static files embedded in the binary (no build step, nothing fetched at run
//! time) and a small JSON API over the served bags:
//!
//! | request | answer |
//! |---|---|
//! | `GET /` | the page (`/app.js`, `/chart.js`, `/style.css` with it) |
//! | `GET /api/summary` | bags, time range, the WebSocket URL, topics with counts, rates, and whether they hold images |
//! | `GET /api/density?bins=N` | messages per topic in N equal time bins (the whole bags read once, then cached) |
//! | `GET /api/fields?topic=T` | the numeric field paths of T |
//! | `GET /api/series?field=F` | F over time, as the chart code draws it |
//! | `GET /api/image?topic=T&t=NS` | the latest image of T at or before NS: PNG, or the recorded bytes |
//!
//! API requests read bags: the HTTP side calls this on a blocking thread.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use rbag_bag::decode::TypeSources;
use rbag_bag::Bag;
use rbag_view::density::{density, Density};
use rbag_view::export::frame_at;
use rbag_view::image::{extension, is_image_type, Picture};
use rbag_view::plot::{chart_json, Chart, XAxis};
use rbag_view::series::{self, SeriesSpec};
use serde_json::{json, Value};

use crate::{HttpResponse, Shared};

const INDEX_HTML: &str = include_str!("page/index.html");
const APP_JS: &str = include_str!("page/app.js");
const STYLE_CSS: &str = include_str!("page/style.css");

/// The most density bins a client may ask for.
pub const MAX_BINS: usize = 4000;

/// What the page computes once and keeps: densities per bin count, rates, and each bag's types.
#[derive(Default)]
pub(crate) struct PageCache {
    density: Mutex<BTreeMap<usize, Arc<Density>>>,
    rates: Mutex<Option<Arc<BTreeMap<String, f64>>>>,
    types: OnceLock<Vec<TypeSources>>,
}

/// Answers one plain HTTP request. `method` is as sent (`GET`, `HEAD`, ...); `path` starts
/// with `/` and includes any `?query`.
pub fn respond(method: &str, path: &str, shared: &Shared) -> HttpResponse {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    if method != "GET" && method != "HEAD" {
        return HttpResponse::text(405, format!("{method} {route}: the page answers GET only\n"));
    }
    let q = parse_query(query);
    let result = match route {
        "/" | "/index.html" => Ok(HttpResponse::html(INDEX_HTML)),
        "/app.js" => Ok(HttpResponse::with(200, "text/javascript; charset=utf-8", APP_JS.into())),
        "/chart.js" => Ok(HttpResponse::with(200, "text/javascript; charset=utf-8", rbag_view::plot::CHART_JS.into())),
        "/style.css" => Ok(HttpResponse::with(200, "text/css; charset=utf-8", STYLE_CSS.into())),
        "/api/summary" => summary(shared).map(json_response),
        "/api/density" => {
            let bins = q.get("bins").and_then(|b| b.parse().ok()).unwrap_or(400usize).clamp(1, MAX_BINS);
            density_json(shared, bins).map(json_response)
        }
        "/api/fields" => required(&q, "topic").and_then(|t| fields(shared, t)).map(json_response),
        "/api/series" => required(&q, "field").and_then(|f| series_json(shared, f)).map(HttpResponse::json),
        "/api/image" => image(shared, &q),
        _ => return HttpResponse::not_found(route),
    };
    result.unwrap_or_else(|(status, message)| {
        let mut r = HttpResponse::json(json!({ "error": message }).to_string());
        r.status = status;
        r
    })
}

type ApiResult<T> = Result<T, (u16, String)>;

fn json_response(v: Value) -> HttpResponse {
    HttpResponse::json(v.to_string())
}

fn required<'q>(q: &'q BTreeMap<String, String>, name: &str) -> ApiResult<&'q str> {
    q.get(name).map(String::as_str).filter(|v| !v.is_empty()).ok_or_else(|| (400, format!("missing ?{name}=")))
}

fn internal(e: impl std::fmt::Display) -> (u16, String) {
    (500, e.to_string())
}

/// Types to decode a bag with: its own definitions, then the bundled store for its distro
/// (built once per bag, not per request).
fn types(shared: &Shared, bag: &Bag) -> TypeSources {
    let all = shared.page.types.get_or_init(|| {
        let of = |b: &Bag| b.storage_info().ok().and_then(|i| rbag_bag::types::sources_for(&i.properties, &[]).ok());
        shared.bags().iter().map(|b| of(b).unwrap_or_default()).collect()
    });
    let index = shared.bags().iter().position(|b| std::ptr::eq(b, bag));
    index.and_then(|i| all.get(i)).cloned().unwrap_or_default()
}

fn bags_with<'s>(shared: &'s Shared, topic: &'s str) -> impl Iterator<Item = &'s Bag> + 's {
    shared.bags().iter().filter(move |b| b.connections().iter().any(|c| c.topic == topic))
}

/// Messages per second per topic, from the median period between messages.
fn rates(shared: &Shared) -> Arc<BTreeMap<String, f64>> {
    let mut cached = shared.page.rates.lock().unwrap_or_else(|e| e.into_inner());
    cached
        .get_or_insert_with(|| {
            let mut rates = BTreeMap::new();
            for bag in shared.bags() {
                for (topic, period) in bag.median_periods().unwrap_or_default() {
                    if period > 0 {
                        rates.entry(topic).or_insert(1e9 / period as f64);
                    }
                }
            }
            Arc::new(rates)
        })
        .clone()
}

fn summary(shared: &Shared) -> ApiResult<Value> {
    let rates = rates(shared);
    let mut topics: BTreeMap<&str, Value> = BTreeMap::new();
    for c in shared.channels() {
        let entry = topics.entry(&c.topic).or_insert_with(|| {
            json!({
                "topic": c.topic, "type": c.schema_name, "count": 0u64, "channels": [],
                "rate_hz": rates.get(&c.topic), "image": is_image_type(&c.schema_name),
            })
        });
        entry["count"] = json!(entry["count"].as_u64().unwrap_or(0) + c.message_count);
        if let Some(ids) = entry["channels"].as_array_mut() {
            ids.push(json!(c.id));
        }
    }
    let (start, end) = shared.time_range().unwrap_or((0, 0));
    Ok(json!({
        "bags": shared.bags().iter().map(|b| b.path().display().to_string()).collect::<Vec<_>>(),
        "ws_url": shared.ws_url(),
        "start_ns": start.to_string(),
        "end_ns": end.to_string(),
        "duration_s": (end - start) as f64 / 1e9,
        "message_count": shared.message_count(),
        "topics": topics.into_values().collect::<Vec<_>>(),
    }))
}

fn density_json(shared: &Shared, bins: usize) -> ApiResult<Value> {
    let d = {
        let mut cache = shared.page.density.lock().unwrap_or_else(|e| e.into_inner());
        match cache.get(&bins) {
            Some(d) => d.clone(),
            None => {
                let d = Arc::new(density(shared.bags(), bins).map_err(internal)?);
                // A few bin counts at most: a client asking for each of 4000 keeps memory small.
                if cache.len() >= 8 {
                    cache.clear();
                }
                cache.insert(bins, d.clone());
                d
            }
        }
    };
    Ok(json!({ "start_ns": d.start.to_string(), "end_ns": d.end.to_string(), "bins": bins, "topics": d.topics }))
}

fn fields(shared: &Shared, topic: &str) -> ApiResult<Value> {
    let bag = bags_with(shared, topic).next().ok_or_else(|| (404, format!("no topic {topic}")))?;
    let fields = rbag_view::fields::numeric_fields(bag, topic, &types(shared, bag)).map_err(internal)?;
    Ok(json!({ "topic": topic, "fields": fields }))
}

fn series_json(shared: &Shared, field: &str) -> ApiResult<String> {
    let (topic, _) = rbag_bag::read::split_topic(field);
    let known: Vec<&str> =
        shared.bags().iter().flat_map(|b| b.connections().iter().map(|c| c.topic.as_str())).collect();
    let topic = match rbag_bag::read::resolve_topic(field, &known) {
        rbag_bag::read::Resolved::Topic(t, _) => t,
        _ => return Err((404, format!("no topic {topic}"))),
    };
    let mut all: Vec<series::Series> = Vec::new();
    for bag in bags_with(shared, &topic) {
        let spec = SeriesSpec { fields: vec![field.into()], types: types(shared, bag), ..Default::default() };
        let read = series::read(bag, &spec).map_err(|e| (400, e.to_string()))?;
        for s in read.series {
            match all.iter_mut().find(|a| a.label == s.label) {
                Some(a) => {
                    a.times.extend(s.times);
                    a.values.extend(s.values);
                }
                None => all.push(s),
            }
        }
    }
    // Several bags: one time order.
    for s in &mut all {
        let mut pairs: Vec<(u64, f64)> = s.times.iter().copied().zip(s.values.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        (s.times, s.values) = pairs.into_iter().unzip();
    }
    let origin = shared.time_range().map_or(0, |r| r.0);
    let group: Vec<usize> = (0..all.len()).collect();
    let x = XAxis::Time { format: rbag_bag::text::TimeFormat::Rel, origin };
    let chart = Chart::time(field, &all, &[group], x);
    Ok(chart_json(&chart))
}

fn image(shared: &Shared, q: &BTreeMap<String, String>) -> ApiResult<HttpResponse> {
    let topic = required(q, "topic")?;
    let t: u64 = required(q, "t")?.parse().map_err(|_| (400, "t: not an integer of ns".to_string()))?;
    let mut best = None;
    for bag in bags_with(shared, topic) {
        if let Some(f) = frame_at(bag, topic, t, &types(shared, bag)).map_err(|e| (400, e.to_string()))? {
            if best.as_ref().is_none_or(|b: &rbag_view::export::Frame| f.log_time > b.log_time) {
                best = Some(f);
            }
        }
    }
    let frame = best.ok_or_else(|| (404, format!("{topic}: no image at or before {t}")))?;
    let (bytes, kind) = match frame.picture {
        Picture::Raw(p) => (p.png().map_err(internal)?, "png"),
        Picture::Compressed { data, .. } => {
            let kind = extension(&data);
            (data, kind)
        }
    };
    let content_type = match kind {
        "png" => "image/png",
        "jpg" => "image/jpeg",
        "webp" => "image/webp",
        _ => {
            return Err((415, format!("{topic}: the image at {} is in a format a browser cannot show", frame.log_time)))
        }
    };
    let mut r = HttpResponse::with(200, content_type, bytes);
    r.headers.push(("X-Log-Time".into(), frame.log_time.to_string()));
    Ok(r)
}

/// `a=1&b=%2Fimu` as a map, percent-decoded (`+` is a space).
pub(crate) fn parse_query(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
            (b'+', ..) => out.push(b' '),
            (b, ..) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_percent_decoded() {
        let q = parse_query("topic=%2Fcamera%2Fimage_raw&t=12&x=a+b&bad=%zz&end=%4");
        assert_eq!(q["topic"], "/camera/image_raw");
        assert_eq!(q["t"], "12");
        assert_eq!(q["x"], "a b");
        assert_eq!(q["bad"], "%zz");
        assert_eq!(q["end"], "%4");
    }
}
