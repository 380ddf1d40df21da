//! The web UI over HTTP, as a browser meets it: the one-time sign-in, the session cookie, the
//! pages, escaping of stored text, and the CSRF check on every change.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

/// A browser: no bearer token, no redirects followed, cookies sent by hand.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in through `POST /ui/login-code` (with the token, as `moss ui` does) and the address it
/// gives; returns the session's `Cookie` header value.
async fn sign_in(d: &TestDaemon) -> String {
    let (s, code) = d.call("POST", "/ui/login-code", None).await;
    assert_eq!(s, 200, "{code}");
    let path = code["path"].as_str().unwrap().to_string();
    let resp = browser().get(d.url(&path)).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/ui/");
    let cookie = resp.headers()["set-cookie"].to_str().unwrap().to_string();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    // The code works once.
    let again = browser().get(d.url(&path)).send().await.unwrap();
    assert_eq!(again.status(), 403);
    cookie.split(';').next().unwrap().to_string()
}

async fn get(d: &TestDaemon, cookie: &str, path: &str) -> (u16, String) {
    let resp = browser()
        .get(d.url(path))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let csp = resp
        .headers()
        .get("content-security-policy")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
    // A browser sends `Origin: null` with the forms of a no-referrer page, which the guard
    // refuses; same-origin keeps the page's own origin on them.
    assert_eq!(resp.headers()["referrer-policy"], "same-origin", "{path}");
    (status, resp.text().await.unwrap())
}

async fn post_form(d: &TestDaemon, cookie: &str, path: &str, body: &str) -> (u16, String) {
    let resp = browser()
        .post(d.url(path))
        .header("cookie", cookie)
        .header("origin", d.base.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    (
        resp.status().as_u16(),
        resp.text().await.unwrap_or_default(),
    )
}

/// The CSRF token in a page's form.
fn csrf(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a csrf token")
        + 19;
    html[at..].split('"').next().unwrap().to_string()
}

#[tokio::test]
async fn a_session_sees_workspaces_search_and_a_capsule_rendered_inert() {
    let d = TestDaemon::start().await;
    let text = capsule_text("wombatword")
        + "\n<script>alert('xss')</script> [click](javascript:alert(1))\n";
    let (s, stored) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "shop", "name": "handoff", "capsule_text": text})),
        )
        .await;
    assert_eq!(s, 200, "{stored}");
    let id = stored["id"].as_str().unwrap().to_string();

    // Without a session: sent to the page that says to run `moss ui`.
    let resp = browser().get(d.url("/ui/")).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/ui/welcome");
    let welcome = browser().get(d.url("/ui/welcome")).send().await.unwrap();
    assert!(welcome.text().await.unwrap().contains("moss ui"));
    // The sign-in code itself needs the token.
    let resp = browser()
        .post(d.url("/ui/login-code"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);

    let cookie = sign_in(&d).await;
    let (s, home) = get(&d, &cookie, "/ui/").await;
    assert_eq!(s, 200);
    assert!(home.contains("/ui/w/shop/capsules"), "{home}");

    let (s, found) = get(&d, &cookie, "/ui/search?q=wombatword").await;
    assert_eq!(s, 200);
    assert!(
        found.contains(&format!("/ui/w/shop/capsules/{id}")),
        "{found}"
    );
    assert!(found.contains("<mark>wombatword</mark>"), "{found}");

    let (s, list) = get(&d, &cookie, "/ui/w/shop/capsules").await;
    assert_eq!(s, 200);
    assert!(list.contains("handoff"), "{list}");

    let (s, page) = get(&d, &cookie, &format!("/ui/w/shop/capsules/{id}")).await;
    assert_eq!(s, 200);
    assert!(
        !page.contains("<script>alert"),
        "a stored script is shown, not run: {page}"
    );
    assert!(page.contains("&lt;script&gt;"), "{page}");
    assert!(
        !page.to_lowercase().contains("href=\"javascript:"),
        "{page}"
    );

    // A change without the session's token is refused and changes nothing.
    let path = format!("/ui/w/shop/capsules/{id}/delete");
    let (s, _) = post_form(&d, &cookie, &path, "csrf=forged").await;
    assert_eq!(s, 403);
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert!(c["deleted_at"].is_null(), "{c}");
    // With it, the capsule is soft-deleted, then restored, through the same domain calls.
    let token = csrf(&page);
    let (s, _) = post_form(&d, &cookie, &path, &format!("csrf={token}")).await;
    assert_eq!(s, 303);
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert!(c["deleted_at"].is_i64(), "{c}");
    let restore = format!("/ui/w/shop/capsules/{id}/restore");
    let (s, _) = post_form(&d, &cookie, &restore, &format!("csrf={token}")).await;
    assert_eq!(s, 303);
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert!(c["deleted_at"].is_null(), "{c}");

    // A made-up session is no session.
    let resp = browser()
        .get(d.url("/ui/"))
        .header("cookie", "moss_ui=00ff")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 303);
    // A cross-site request is refused by the guard, as on every route.
    let resp = browser()
        .get(d.url("/ui/"))
        .header("cookie", &cookie)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
}

/// A task's page, its graph drawn with as many nodes as branchmind_graph_query returns, a
/// recall with every factor of the score, a forget seen before it is done, and the timeline.
#[tokio::test]
async fn tasks_graph_memories_and_timeline_pages() {
    let d = TestDaemon::start().await;
    let ok = |v: (u16, serde_json::Value)| {
        assert_eq!(v.0, 200, "{}", v.1);
        v.1
    };
    ok(d.call(
        "POST",
        "/tasks/create",
        Some(json!({"workspace": "shop", "title": "Refunds"})),
    )
    .await);
    ok(d.call(
        "POST",
        "/tasks/create",
        Some(
            json!({"workspace": "shop", "title": "Ship refunds", "parent": "PLAN-001",
                "steps": [{"title": "Write the endpoint"}, {"title": "Test it"}]}),
        ),
    )
    .await);
    ok(d.call(
        "POST",
        "/reasoning/think/card",
        Some(json!({"workspace": "shop", "target": "TASK-001",
                "card": {"id": "h1", "type": "hypothesis", "title": "Queue it"}})),
    )
    .await);
    ok(d.call(
        "POST",
        "/memories",
        Some(
            json!({"workspace": "shop", "content": "Refunds need an idempotency key",
                "context": "TASK-001"}),
        ),
    )
    .await);
    let cookie = sign_in(&d).await;

    let (s, list) = get(&d, &cookie, "/ui/w/shop/tasks").await;
    assert_eq!(s, 200);
    assert!(list.contains("/ui/w/shop/tasks/TASK-001"), "{list}");
    let (s, task) = get(&d, &cookie, "/ui/w/shop/tasks/TASK-001").await;
    assert_eq!(s, 200);
    for text in ["Write the endpoint", "Test it", "Radar", "Trace"] {
        assert!(task.contains(text), "{text}: {task}");
    }

    let (s, graph) = get(&d, &cookie, "/ui/w/shop/graph?target=TASK-001").await;
    assert_eq!(s, 200);
    let q = ok(d
        .call(
            "POST",
            "/reasoning/graph/query",
            Some(json!({"workspace": "shop", "target": "TASK-001", "limit": 100})),
        )
        .await);
    let nodes = q["nodes"].as_array().unwrap().len();
    assert!(nodes >= 3, "{q}");
    assert_eq!(graph.matches("<g class=\"node\"").count(), nodes, "{graph}");

    let (s, recall) = get(&d, &cookie, "/ui/w/shop/memories?q=idempotency").await;
    assert_eq!(s, 200);
    assert!(
        recall.contains("Refunds need an idempotency key"),
        "{recall}"
    );
    assert!(
        recall.contains("specificity"),
        "the score's factors: {recall}"
    );
    let link = recall
        .split("href=\"")
        .find(|s| s.starts_with("/ui/w/shop/memories/forget?id="))
        .and_then(|s| s.split('"').next())
        .expect("a forget link")
        .replace("&amp;", "&");
    let (s, preview) = get(&d, &cookie, &link).await;
    assert_eq!(s, 200);
    assert!(preview.contains("This removes exactly"), "{preview}");
    assert!(
        preview.contains("Refunds need an idempotency key"),
        "{preview}"
    );
    let id = link.split("id=").nth(1).unwrap();
    // The preview removed nothing; the form without its token is refused.
    let (_, still) = d
        .call(
            "POST",
            "/memories/recall",
            Some(json!({"workspace": "shop", "query": "idempotency"})),
        )
        .await;
    assert_eq!(still["items"].as_array().unwrap().len(), 1, "{still}");
    let (s, _) = post_form(
        &d,
        &cookie,
        "/ui/w/shop/memories/forget",
        &format!("id={id}"),
    )
    .await;
    assert_eq!(s, 403);
    let token = csrf(&preview);
    let (s, done) = post_form(
        &d,
        &cookie,
        "/ui/w/shop/memories/forget",
        &format!("csrf={token}&id={id}"),
    )
    .await;
    assert_eq!(s, 200, "{done}");
    let (_, gone) = d
        .call(
            "POST",
            "/memories/recall",
            Some(json!({"workspace": "shop", "query": "idempotency"})),
        )
        .await;
    assert_eq!(gone["items"].as_array().unwrap().len(), 0, "{gone}");

    let (s, timeline) = get(&d, &cookie, "/ui/w/shop/timeline").await;
    assert_eq!(s, 200);
    assert!(timeline.contains("/ui/w/shop/tasks/TASK-001"), "{timeline}");
}

/// A capsule's diff with an earlier version, and a graph conflict resolved from its page with
/// the session's token (and refused without it).
#[tokio::test]
async fn a_version_diff_and_a_conflict_resolved_from_the_graph_page() {
    let d = TestDaemon::start().await;
    let ok = |v: (u16, serde_json::Value)| {
        assert_eq!(v.0, 200, "{}", v.1);
        v.1
    };
    let stored = ok(d
        .call(
            "POST",
            "/capsules",
            Some(
                json!({"workspace": "shop", "name": "plan", "capsule_text": capsule_text("first")}),
            ),
        )
        .await);
    let id = stored["id"].as_str().unwrap().to_string();
    ok(d.call(
        "PUT",
        &format!("/capsules/{id}"),
        Some(json!({"capsule_text": capsule_text("second")})),
    )
    .await);
    let apply = |branch: &str, title: &str| {
        json!({"workspace": "shop", "branch": branch, "doc": "graph",
            "ops": [{"op": "node_upsert", "id": "x", "type": "hypothesis", "title": title}]})
    };
    ok(d.call(
        "POST",
        "/reasoning/graph/apply",
        Some(apply("main", "base")),
    )
    .await);
    ok(d.call(
        "POST",
        "/reasoning/branch/create",
        Some(json!({"workspace": "shop", "name": "b", "from": "main"})),
    )
    .await);
    ok(
        d.call("POST", "/reasoning/graph/apply", Some(apply("b", "theirs")))
            .await,
    );
    ok(d.call(
        "POST",
        "/reasoning/graph/apply",
        Some(apply("main", "ours")),
    )
    .await);
    let merged = ok(d
        .call(
            "POST",
            "/reasoning/graph/merge",
            Some(json!({"workspace": "shop", "doc": "graph", "from": "b", "into": "main"})),
        )
        .await);
    assert_eq!(merged["conflicts_created"], 1, "{merged}");
    let cookie = sign_in(&d).await;

    let (s, page) = get(&d, &cookie, &format!("/ui/w/shop/capsules/{id}")).await;
    assert_eq!(s, 200);
    let diff_link = format!("/ui/w/shop/capsules/{id}/diff?version=");
    assert!(page.contains(&diff_link), "{page}");
    let at = page.find(&diff_link).unwrap() + diff_link.len();
    let version: String = page[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    let (s, diff) = get(&d, &cookie, &format!("{diff_link}{version}")).await;
    assert_eq!(s, 200, "{diff}");
    assert!(diff.contains("modified"), "{diff}");
    assert!(diff.contains("class=\"add\""), "{diff}");

    let (s, graph) = get(&d, &cookie, "/ui/w/shop/graph?branch=main&doc=graph").await;
    assert_eq!(s, 200);
    let at = graph
        .find("name=\"conflict_id\" value=\"")
        .expect("a conflict form")
        + 26;
    let conflict: String = graph[at..].split('"').next().unwrap().to_string();
    let (s, _) = post_form(
        &d,
        &cookie,
        "/ui/w/shop/graph/resolve",
        &format!("conflict_id={conflict}&resolution=use_from&branch=main"),
    )
    .await;
    assert_eq!(s, 403);
    let token = csrf(&graph);
    let (s, _) = post_form(
        &d,
        &cookie,
        "/ui/w/shop/graph/resolve",
        &format!("csrf={token}&conflict_id={conflict}&resolution=use_from&branch=main"),
    )
    .await;
    assert_eq!(s, 303);
    let open = ok(d
        .call(
            "POST",
            "/reasoning/graph/conflicts",
            Some(json!({"workspace": "shop", "doc": "graph", "into": "main", "status": "open"})),
        )
        .await);
    assert_eq!(open["conflicts"], json!([]), "{open}");
    let q = ok(d
        .call(
            "POST",
            "/reasoning/graph/query",
            Some(json!({"workspace": "shop", "branch": "main", "doc": "graph", "ids": ["x"]})),
        )
        .await);
    assert_eq!(q["nodes"][0]["title"], "theirs", "{q}");
}

/// The rows of the first `<table class="{class}">` of a page.
fn table<'a>(html: &'a str, class: &str) -> &'a str {
    let at = html
        .find(&format!("<table class=\"{class}\""))
        .unwrap_or_else(|| panic!("no table {class}: {html}"));
    let rest = &html[at..];
    &rest[..rest.find("</table>").unwrap()]
}

/// A node's versions: linked from the SVG and from the list under it, every version on the
/// branch with what it changed (the text as a diff), its bases' versions up to the fork on a
/// branch's view, paged, and a hostile title shown as text.
#[tokio::test]
async fn a_node_opens_its_versions_with_what_each_changed() {
    let d = TestDaemon::start().await;
    let ok = |v: (u16, serde_json::Value)| {
        assert_eq!(v.0, 200, "{}", v.1);
        v.1
    };
    let apply = |branch: &str, op: serde_json::Value| json!({"workspace": "shop", "branch": branch, "doc": "graph", "ops": [op]});
    let hostile = "<script>alert('node')</script> Queue it";
    for op in [
        json!({"op": "node_upsert", "id": "h1", "type": "hypothesis", "title": hostile,
            "text": "line one"}),
        json!({"op": "node_upsert", "id": "h1", "type": "hypothesis", "title": hostile,
            "status": "done", "text": "line one\nline two"}),
    ] {
        ok(
            d.call("POST", "/reasoning/graph/apply", Some(apply("main", op)))
                .await,
        );
    }
    ok(d.call(
        "POST",
        "/reasoning/branch/create",
        Some(json!({"workspace": "shop", "name": "what-if", "from": "main"})),
    )
    .await);
    ok(d.call(
        "POST",
        "/reasoning/graph/apply",
        Some(apply(
            "what-if",
            json!({"op": "node_upsert", "id": "h1", "type": "decision", "title": "Decided"}),
        )),
    )
    .await);
    // After the fork: main's own, which the branch never saw.
    ok(d.call(
        "POST",
        "/reasoning/graph/apply",
        Some(apply("main", json!({"op": "node_delete", "id": "h1"}))),
    )
    .await);
    for i in 0..25 {
        ok(d.call(
            "POST",
            "/reasoning/graph/apply",
            Some(apply(
                "what-if",
                json!({"op": "node_upsert", "id": "busy", "type": "question", "title": format!("v{i}")}),
            )),
        )
        .await);
    }
    let cookie = sign_in(&d).await;

    let (s, graph) = get(&d, &cookie, "/ui/w/shop/graph?branch=what-if&doc=graph").await;
    assert_eq!(s, 200, "{graph}");
    let link = "/ui/w/shop/graph/node?branch=what-if&amp;doc=graph&amp;id=h1";
    assert!(
        graph.contains(&format!("<a href=\"{link}\"><g class=\"node\"")),
        "the SVG node links to its versions: {graph}"
    );
    assert!(
        graph.contains(&format!("<li><a href=\"{link}\">")),
        "{graph}"
    );

    let (s, page) = get(&d, &cookie, &link.replace("&amp;", "&")).await;
    assert_eq!(s, 200, "{page}");
    let rows = table(&page, "versions");
    // The branch's own version, then main's two from before the fork; not main's deletion.
    assert_eq!(rows.matches("data-seq=").count(), 3, "{rows}");
    assert!(!rows.contains("<em>deleted</em>"), "{rows}");
    let branches: Vec<&str> = rows
        .split("<tr")
        .skip(2)
        .map(|r| {
            if r.contains("<td>what-if</td>") {
                "what-if"
            } else {
                "main"
            }
        })
        .collect();
    assert_eq!(branches, ["what-if", "main", "main"], "{rows}");
    for text in [
        "Decided",
        "<strong>type</strong> <del>hypothesis</del> → <ins>decision</ins>",
        "<strong>status</strong> <del></del> → <ins>done</ins>",
        "<span class=\"add\">+line two</span>",
        "created",
    ] {
        assert!(rows.contains(text), "{text}: {rows}");
    }
    assert!(
        !page.contains("<script>alert"),
        "a stored title is shown, not run: {page}"
    );
    assert!(page.contains("&lt;script&gt;alert"), "{page}");

    // On main, the deletion is the newest version.
    let (s, page) = get(
        &d,
        &cookie,
        "/ui/w/shop/graph/node?branch=main&doc=graph&id=h1",
    )
    .await;
    assert_eq!(s, 200, "{page}");
    let rows = table(&page, "versions");
    assert_eq!(rows.matches("data-seq=").count(), 3, "{rows}");
    assert!(rows.contains("<em>deleted</em>"), "{rows}");

    // Paged: the oldest version of the first page is told against the first of the next.
    let busy = "/ui/w/shop/graph/node?branch=what-if&doc=graph&id=busy";
    let (s, first) = get(&d, &cookie, busy).await;
    assert_eq!(s, 200, "{first}");
    let rows = table(&first, "versions");
    assert_eq!(rows.matches("data-seq=").count(), 20, "{rows}");
    assert!(!rows.contains("created"), "{rows}");
    assert!(rows.contains("<del>v4</del> → <ins>v5</ins>"), "{rows}");
    let older = first
        .split("href=\"")
        .find(|s| s.contains("cursor="))
        .and_then(|s| s.split('"').next())
        .expect("an older page")
        .replace("&amp;", "&");
    let (s, second) = get(&d, &cookie, &older).await;
    assert_eq!(s, 200, "{second}");
    let rows = table(&second, "versions");
    assert_eq!(rows.matches("data-seq=").count(), 5, "{rows}");
    assert!(
        rows.contains("created") && rows.contains("<ins>v4</ins>"),
        "{rows}"
    );
    assert!(!second.contains("Older versions"), "{second}");

    // A node the view does not have says so.
    let (s, missing) = get(
        &d,
        &cookie,
        "/ui/w/shop/graph/node?branch=main&doc=graph&id=nope",
    )
    .await;
    assert_eq!(s, 404, "{missing}");
    assert!(missing.contains("branchmind_graph_query"), "{missing}");
}

/// The memories page browses by context (each context a link filtering the list, paged) and
/// by slot (each with the memory holding it), escapes stored text, and lists the sources that
/// ran with their last run and error.
#[tokio::test]
async fn memories_by_context_and_slot_with_the_sources_last_runs() {
    let d = TestDaemon::start().await;
    let ok = |v: (u16, serde_json::Value)| {
        assert_eq!(v.0, 200, "{}", v.1);
        v.1
    };
    let store = |body: serde_json::Value| d.call("POST", "/memories", Some(body));
    for i in 0..55 {
        ok(store(
            json!({"workspace": "shop", "content": format!("Refund rule {i}"),
            "context": "TASK-001"}),
        )
        .await);
    }
    ok(store(
        json!({"workspace": "shop", "content": "Auth tokens rotate hourly",
        "context": "src/auth.py", "slot": "rules", "weight": 2.0}),
    )
    .await);
    ok(store(json!({"workspace": "shop", "content": "Lighter rule",
        "context": "src/auth.py", "slot": "rules"}))
    .await);
    ok(store(json!({"workspace": "shop",
        "content": "<img src=x onerror=alert(1)> tabs, not spaces",
        "context": "<b>fmt</b>", "slot": "style"}))
    .await);
    // Sources of every workspace, one failing, and a project's, failing too.
    std::fs::create_dir_all(d.home_path().join("sources")).unwrap();
    std::fs::write(
        d.home_path().join("sources/broken.lua"),
        "store('first', {})\nlocal x = nil\nx.field = 1\n",
    )
    .unwrap();
    ok(d.call(
        "POST",
        "/memories/sources/run",
        Some(json!({"workspace": "shop"})),
    )
    .await);
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".moss/sources")).unwrap();
    std::fs::write(
        project.path().join(".moss/sources/proj.lua"),
        "error('no such table')\n",
    )
    .unwrap();
    let root = project.path().canonicalize().unwrap().display().to_string();
    ok(d.call(
        "POST",
        "/memories/sources/run",
        Some(json!({"workspace": "shop", "root": root})),
    )
    .await);
    let cookie = sign_in(&d).await;

    let (s, page) = get(&d, &cookie, "/ui/w/shop/memories").await;
    assert_eq!(s, 200, "{page}");
    let contexts = table(&page, "contexts");
    assert!(
        contexts.contains("<a href=\"/ui/w/shop/memories?ctx=task-001\">task-001</a>"),
        "{contexts}"
    );
    assert!(contexts.contains("<td class=\"num\">55</td>"), "{contexts}");
    assert!(contexts.contains("&lt;b&gt;fmt&lt;/b&gt;"), "{contexts}");
    assert!(!page.contains("<b>fmt"), "{page}");
    let slots = table(&page, "slots");
    let rules = slots
        .split("<tr")
        .find(|r| r.contains(">rules<"))
        .expect("the rules slot");
    assert!(
        rules.contains("Auth tokens rotate hourly"),
        "the heaviest holds it: {rules}"
    );
    assert!(
        rules.contains("<td class=\"num\">2</td>"),
        "two memories: {rules}"
    );
    assert!(
        slots.contains("&lt;img src=x onerror=alert(1)&gt; tabs"),
        "{slots}"
    );
    assert!(!page.contains("<img"), "{page}");
    let newest = table(&page, "memories");
    assert_eq!(
        newest.matches("<tr>").count() - 1,
        50,
        "a page of 50: {newest}"
    );

    // One context: its memories only, newest first, paged.
    let (s, ctx) = get(&d, &cookie, "/ui/w/shop/memories?ctx=task-001").await;
    assert_eq!(s, 200, "{ctx}");
    let rows = table(&ctx, "memories");
    assert_eq!(rows.matches("Refund rule").count(), 50, "{rows}");
    assert!(!rows.contains("Auth tokens"), "{rows}");
    assert!(rows.find("Refund rule 54").unwrap() < rows.find("Refund rule 53").unwrap());
    let older = ctx
        .split("href=\"")
        .find(|s| s.starts_with("/ui/w/shop/memories?ctx=task-001&amp;cursor="))
        .and_then(|s| s.split('"').next())
        .expect("an older page")
        .replace("&amp;", "&");
    let (s, rest) = get(&d, &cookie, &older).await;
    assert_eq!(s, 200, "{rest}");
    let rows = table(&rest, "memories");
    assert_eq!(rows.matches("Refund rule").count(), 5, "{rows}");
    assert!(rows.contains("Refund rule 0<"), "{rows}");

    // Every source that ran, with its last run and error; the project's with its root.
    let sources = table(&page, "sources");
    for (name, error) in [
        ("broken.lua", "broken.lua:3"),
        ("proj.lua", "no such table"),
    ] {
        let row = sources
            .split("<tr>")
            .find(|r| r.contains(&format!("<td>{name}</td>")))
            .unwrap_or_else(|| panic!("{name}: {sources}"));
        assert!(row.contains("<td>error</td>"), "{row}");
        assert!(row.contains(error), "{row}");
        assert!(row.contains(" UTC</td>") && !row.contains("never"), "{row}");
    }
    assert!(sources.contains(&root), "{sources}");
}
