//! The daemon's own routes: `GET /status` and `POST /shutdown`, both behind the bearer token.

use std::time::Duration;

use moss_client::capsule::{FetchRequest, StoreRequest};
use moss_client::{Client, ClientError};
use moss_tests::{TestDaemon, capsule_text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_address_version_pid_database_and_uptime() {
    let d = TestDaemon::start().await;
    let s = d.client.status().await.expect("status");
    assert_eq!(s.address, d.daemon.addr.to_string());
    assert_eq!(s.version, moss_client::VERSION);
    assert_eq!(s.pid, std::process::id());
    let home = d.home_path().canonicalize().unwrap();
    assert_eq!(std::path::Path::new(&s.home).canonicalize().unwrap(), home);
    if moss_tests::on_postgres() {
        // A PostgreSQL store: its URL, without a password.
        assert!(s.db_path.starts_with("postgres://"), "{}", s.db_path);
    } else {
        assert!(
            std::path::Path::new(&s.db_path).starts_with(&s.home),
            "{} is not under {}",
            s.db_path,
            s.home
        );
        assert!(std::path::Path::new(&s.db_path).exists(), "{}", s.db_path);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(
        (now - 60..=now).contains(&s.started_at),
        "started_at {} vs now {now}",
        s.started_at
    );
    assert!(s.uptime_seconds < 60, "{}", s.uptime_seconds);
    assert_eq!(s.index_behind, Some(0), "nothing written, nothing to index");
    if moss_tests::on_postgres() {
        // PostgreSQL indexes words in the writing transaction: no index to report.
        assert!(s.index.is_empty(), "{:?}", s.index);
    } else {
        assert_eq!(
            s.index,
            ["capsules", "reasoning", "memories", "tasks"].map(|source| {
                moss_client::daemon::IndexStatus {
                    source: source.into(),
                    queued: 0,
                    applied: 0,
                    behind: 0,
                }
            }),
            "the index reports each source"
        );
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_follows_the_full_text_index_until_it_has_every_write() {
    let d = TestDaemon::start().await;
    for i in 0..200 {
        d.client
            .capsules()
            .store(&StoreRequest {
                capsule_text: capsule_text(&format!("lag{i}")),
                name: Some(format!("lag-{i}")),
                ..Default::default()
            })
            .await
            .expect("store");
    }
    moss_tests::wait_until("the index to catch up", Duration::from_secs(30), || async {
        let behind = d
            .client
            .status()
            .await
            .expect("status")
            .index_behind
            .expect("the daemon reports its index");
        assert!(
            (0..=200).contains(&behind),
            "{behind} behind after 200 writes"
        );
        behind == 0
    })
    .await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_and_shutdown_need_the_token() {
    let d = TestDaemon::start().await;
    for (method, path) in [("GET", "/status"), ("POST", "/shutdown")] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let resp = d
            .http()
            .request(m.clone(), d.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status().as_u16(),
            401,
            "{method} {path} without a token"
        );
        let resp = d
            .http()
            .request(m, d.url(path))
            .bearer_auth("not-the-token")
            .send()
            .await
            .unwrap();
        assert_eq!(
            resp.status().as_u16(),
            401,
            "{method} {path} with a wrong token"
        );
    }
    // The refused shutdowns changed nothing.
    let (status, health) = d.call("GET", "/health", None).await;
    assert_eq!(status, 200, "{health}");
    let anonymous = Client::new(&d.daemon.addr.to_string(), None).unwrap();
    match anonymous.status().await {
        Err(ClientError::Api(body)) => assert_eq!(body.status, 401, "{body:?}"),
        other => panic!("status without a token: {other:?}"),
    }
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_then_drains_and_closes_the_port() {
    let mut d = TestDaemon::start().await;
    let addr = d.daemon.addr;
    // A write issued just before the shutdown is committed, not lost.
    let stored = d
        .client
        .capsules()
        .store(&StoreRequest {
            capsule_text: capsule_text("kept"),
            workspace: Some("ws".into()),
            name: Some("before-shutdown".into()),
            ..Default::default()
        })
        .await
        .expect("store");
    let answer = d.client.shutdown().await.expect("shutdown");
    assert_eq!(answer.status, "shutting_down");
    assert_eq!(answer.pid, std::process::id());
    tokio::time::timeout(Duration::from_secs(15), d.daemon.wait())
        .await
        .expect("the daemon stops within the drain cap")
        .expect("clean shutdown");
    let refused = tokio::net::TcpStream::connect(addr).await;
    assert!(refused.is_err(), "{addr} still accepts after /shutdown");

    // The database was closed cleanly: a new daemon on the same home serves the capsule.
    let again = moss_daemon::start(moss_daemon::server::DaemonOptions::ephemeral(
        moss_daemon::MossHome::at(d.home_path()),
    ))
    .await
    .expect("a daemon starts again on the same home");
    let client = Client::new(&again.addr.to_string(), again.token.clone()).unwrap();
    let fetched = client
        .capsules()
        .fetch(&FetchRequest {
            id: Some(stored.id.clone()),
            ..Default::default()
        })
        .await
        .expect("fetch");
    let text = fetched.capsule_text.unwrap_or_default();
    assert!(text.contains("kept"), "{text}");
    again.shutdown().await.unwrap();
}
