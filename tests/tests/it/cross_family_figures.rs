//! Search across the four families, measured on the labelled fixture of
//! `tests/fixtures/cross_family/` (loaded by `fixture.rs`): 328 items (capsules, reasoning notes
//! and cards, plans and tasks with 110 steps, memories) in three workspaces, and its first 48
//! queries, those in the answer's own words (or their stems), each with the one item it should
//! find (12 answers per family). The paraphrase queries are `relevance_figures`'s.
//!
//! The fixture is loaded through the client, then each query is ranked by each strategy:
//!
//! - **capsules only**: `capsule_search` over every workspace;
//! - **per family, concatenated**: `capsule_search`, then `branchmind_search` in each workspace,
//!   then `memory_recall` in each workspace (workspaces in name order), each list appended to
//!   the last. Plans, tasks and steps have no search of their own, so their answers are misses.
//! - **moss_search**: one search over every family, in the daemon's default mode.
//!
//! Every call asks for 20 hits. A query's rank is the position of its answer (or of an item in
//! its `accept` list: the task holding a step that is the answer) in the strategy's list; an
//! answer not in the list has no rank. Prints success@5 (the answer in the first five) and MRR
//! (mean of 1/rank, 0 without a rank) per strategy, by the answer's family and by the query's
//! form (exact words, words to stem, question). Run it with
//! `cargo test -p moss-tests --test it cross_family_figures -- --nocapture` to see the table.

use moss_client::capsule::SearchRequest as CapsuleSearchRequest;
use moss_client::memory::MemoryRecallRequest;
use moss_client::reasoning::ReasoningSearchRequest;
use moss_tests::TestDaemon;

use crate::fixture::{self, FAMILIES, Item, Keys, LIMIT, Query, WORKSPACES, lines, load, rank_of};

const FORMS: [&str; 3] = ["exact", "stem", "question"];

/// Ranked fixture keys (`None` for a hit that is no fixture item, e.g. a task's trace event),
/// and the errors the calls answered.
type Ranking = (Vec<Option<String>>, Vec<String>);

/// `capsule_search` over every workspace.
async fn capsule_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    match d
        .client
        .capsules()
        .search(&CapsuleSearchRequest {
            query: query.into(),
            limit: Some(LIMIT),
            safe_query: Some(true),
            count_total: Some(false),
            ..Default::default()
        })
        .await
    {
        Ok(page) => (
            page.items
                .iter()
                .map(|h| keys.id("capsule", &h.workspace, &h.id))
                .collect(),
            vec![],
        ),
        Err(e) => (vec![], vec![format!("capsule_search: {e}")]),
    }
}

/// Each family's own search, concatenated: capsules, reasoning per workspace, memories per
/// workspace.
async fn per_family_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    let (mut ranked, mut errors) = capsule_ranking(d, keys, query).await;
    for ws in WORKSPACES {
        match d
            .client
            .reasoning()
            .search(&ReasoningSearchRequest {
                workspace: ws.into(),
                query: query.into(),
                limit: Some(LIMIT),
                ..Default::default()
            })
            .await
        {
            Ok(r) => ranked.extend(r.hits.iter().map(|h| {
                keys.id("reasoning", ws, &h.seq.to_string())
                    .or_else(|| keys.title("reasoning", ws, h.title.as_deref()?))
            })),
            Err(e) => errors.push(format!("branchmind_search {ws}: {e}")),
        }
    }
    for ws in WORKSPACES {
        match d
            .client
            .memories()
            .recall(&MemoryRecallRequest {
                query: Some(query.into()),
                workspace: Some(ws.into()),
                include_global: Some(false),
                limit: Some(LIMIT),
                ..Default::default()
            })
            .await
        {
            Ok(r) => ranked.extend(
                r.items
                    .iter()
                    .map(|m| keys.id("memory", &m.memory.workspace, &m.memory.id)),
            ),
            Err(e) => errors.push(format!("memory_recall {ws}: {e}")),
        }
    }
    (ranked, errors)
}

/// `moss_search` in the daemon's default mode: one ranked list over every family and workspace.
async fn moss_search_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    match fixture::moss_search(d, keys, query, None).await {
        Ok((ranked, _)) => (ranked, vec![]),
        Err(e) => (vec![], vec![e]),
    }
}

/// success@5 and MRR over `ranks`.
fn figures(ranks: &[Option<usize>]) -> (f64, f64) {
    let n = ranks.len().max(1) as f64;
    let s5 = ranks.iter().filter(|r| r.is_some_and(|r| r <= 5)).count() as f64 / n;
    let mrr = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
        .sum::<f64>()
        / n;
    (s5, mrr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_family_figures() {
    let items: Vec<Item> = lines("items.jsonl");
    let queries: Vec<Query> = lines::<Query>("queries.jsonl")
        .into_iter()
        .filter(|q| FORMS.contains(&q.form.as_str()))
        .collect();
    assert!(
        items.len() >= 200 && queries.len() >= 40,
        "{} items, {} queries",
        items.len(),
        queries.len()
    );
    for f in FAMILIES {
        let n = queries.iter().filter(|q| q.family == f).count();
        assert!(n >= 8, "{n} queries answered by the {f} family");
    }

    let d = TestDaemon::start().await;
    let keys = load(&d, &items).await;
    let loaded: std::collections::HashSet<&String> = keys.by_id.values().collect();
    for q in &queries {
        assert!(
            loaded.contains(&q.answer),
            "{}: {} not loaded",
            q.id,
            q.answer
        );
    }

    let names = ["capsules only", "per family, concatenated", "moss_search"];
    // ranks[strategy][query]
    let mut ranks: Vec<Vec<Option<usize>>> = vec![Vec::new(); names.len()];
    let mut errors: Vec<String> = Vec::new();
    let mut lines_out: Vec<String> = Vec::new();
    for q in &queries {
        let rankings = [
            capsule_ranking(&d, &keys, &q.query).await,
            per_family_ranking(&d, &keys, &q.query).await,
            moss_search_ranking(&d, &keys, &q.query).await,
        ];
        let mut row = format!("{} {:8} {:9} {:50}", q.id, q.form, q.family, q.query);
        for (i, (ranked, errs)) in rankings.iter().enumerate() {
            let r = rank_of(q, ranked);
            ranks[i].push(r);
            row.push_str(&format!(
                " {:>4}",
                r.map_or("-".to_string(), |r| r.to_string())
            ));
            errors.extend(errs.iter().map(|e| format!("{} {:?}: {e}", q.id, q.query)));
        }
        lines_out.push(row);
    }

    println!("rank of the answer per query (- = not in the list):");
    println!(
        "{:<4} {:8} {:9} {:50} {:>4} {:>4} {:>4}",
        "", "form", "answer", "query", "(a)", "(b)", "(c)"
    );
    for l in &lines_out {
        println!("{l}");
    }
    let slice = |pick: &dyn Fn(&Query) -> bool, s: usize| -> Vec<Option<usize>> {
        queries
            .iter()
            .zip(&ranks[s])
            .filter(|(q, _)| pick(q))
            .map(|(_, r)| *r)
            .collect()
    };
    println!();
    println!(
        "{:<28} {:>9} {:>7}   by answer family: success@5 (capsule, reasoning, tasks, memory)",
        "strategy", "success@5", "MRR"
    );
    for (s, name) in names.iter().enumerate() {
        let (s5, mrr) = figures(&ranks[s]);
        let by_family: Vec<String> = FAMILIES
            .iter()
            .map(|f| format!("{:.2}", figures(&slice(&|q| q.family == *f, s)).0))
            .collect();
        let by_form: Vec<String> = FORMS
            .iter()
            .map(|f| format!("{f} {:.2}", figures(&slice(&|q| q.form == *f, s)).0))
            .collect();
        println!(
            "({}) {name:<24} {s5:>9.3} {mrr:>7.3}   {}; by form: {}",
            (b'a' + s as u8) as char,
            by_family.join(", "),
            by_form.join(", ")
        );
    }
    println!(
        "queries: {}; items: {}; errors answered by the searches: {}",
        queries.len(),
        items.len(),
        errors.len()
    );
    for e in &errors {
        println!("  {e}");
    }
    // The queries are plain words: every search answers them.
    assert!(errors.is_empty(), "{errors:#?}");
    // One search over every family finds at least what the families' own searches find.
    let ((s5_b, mrr_b), (s5_c, mrr_c)) = (figures(&ranks[1]), figures(&ranks[2]));
    assert!(
        s5_c >= s5_b && mrr_c >= mrr_b,
        "moss_search ({s5_c:.3}, {mrr_c:.3}) below the families' own searches ({s5_b:.3}, \
         {mrr_b:.3})"
    );
    d.stop().await;
}
