//! The indexer thread: rounds of passes over the sources, each pass one transaction of the
//! index file.

use std::sync::atomic::Ordering;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, params};

use super::Indexed;
use super::plan::{Plan, applied_seq};
use super::wake::{Pace, Wake};

/// The indexer thread's nice value where SCHED_IDLE is refused (Linux).
#[cfg(target_os = "linux")]
pub(super) const INDEXER_NICE: i32 = 19;

/// Queue entries read per statement (one read snapshot of `moss.db`, released before the index
/// writes; so at most this many texts in memory at once). Also the indexer's unit of work
/// between rests (see [`Pace`]): about 10 ms for texts of 2 KB.
pub(super) const READ_CHUNK: i64 = 100;
/// Queue entries indexed per transaction of the index file, at most: a pass reads up to this
/// many, `READ_CHUNK` at a time, into one transaction.
pub(super) const PASS_SIZE: i64 = 4_000;

pub(super) fn run(main: Connection, mut fts: Connection, wake: &Wake, sources: &[Indexed]) {
    background_priority();
    let pace = Pace { wake };
    // Each source gets a pass at the first wake (to rebuild or catch up); after that, only
    // while its index is behind its queue. A commit moves `queued` before it sets `pending`,
    // and `pending` is taken before `queued` is read, so no commit is missed.
    let mut visited = vec![false; sources.len()];
    loop {
        // Read `closed` first: once it is seen, every commit of the writer is visible.
        let last = wake.closed.load(Ordering::Acquire);
        if !wake.pending.swap(false, Ordering::AcqRel) && !last {
            // An unpark between the swap and here makes this return at once.
            std::thread::park();
            continue;
        }
        // Rounds of one pass per source, until no source has more queued.
        loop {
            let mut more = false;
            let mut failed = false;
            for (s, visited) in sources.iter().zip(visited.iter_mut()) {
                if *visited
                    && s.position.applied.load(Ordering::Acquire)
                        >= s.position.queued.load(Ordering::Acquire)
                {
                    continue;
                }
                match pass(&main, &mut fts, &s.plan, &pace) {
                    Ok((applied, rest)) => {
                        *visited = true;
                        s.position.applied.store(applied, Ordering::Release);
                        s.progress.send_replace(applied);
                        more |= rest;
                    }
                    Err(e) => {
                        tracing::error!(
                            "full-text indexing of {} failed (will retry): {e}",
                            s.plan.source.name
                        );
                        failed = true;
                    }
                }
            }
            if failed {
                std::thread::sleep(Duration::from_millis(500));
                if last {
                    return;
                }
                // Try again without waiting for another commit: a full disk stops the writes
                // that would wake the indexer, and the index catches up once space is freed.
                wake.pending.store(true, Ordering::Release);
                break;
            }
            if !more {
                break;
            }
        }
        if last {
            return;
        }
    }
}

/// Indexing is background work: under a burst of writes that saturates the CPUs, the requests
/// being answered go first and the index catches up when the burst ends (searches wait for it, up
/// to their bound). On Linux the thread runs under SCHED_IDLE: a waking request thread preempts
/// it at once, where a thread at nice 19 could still finish its time slice first (under
/// `moss bench`, with malloc then capped at two arenas, 5,900-6,000 stores/s against
/// 5,000-5,500 at nice 19 and 4,400-4,900 at nice 10). If the kernel refuses SCHED_IDLE, nice 19.
/// Elsewhere the thread keeps the default.
pub fn background_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{
            NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
            set_thread_priority_and_policy, thread_native_id,
        };
        if let Err(e) = set_thread_priority_and_policy(
            thread_native_id(),
            ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        ) {
            tracing::debug!("cannot put the indexer under SCHED_IDLE: {e:?}");
            let tid = rustix::thread::gettid();
            if let Err(e) = rustix::process::setpriority_process(Some(tid), INDEXER_NICE) {
                tracing::debug!("cannot lower the indexer's priority: {e}");
            }
        }
    }
}

/// One indexing transaction for one source. Returns its new watermark and whether more is
/// queued.
///
/// The read of the main database must not span the index writes: the WAL can start over only
/// when no reader holds an old snapshot (see `store::checkpointer`), and the blocking truncation
/// kept for a WAL that grows anyway stalls new writes while it waits for readers. For the same
/// reason a rebuild, which reads every row in one snapshot, is not paced: resting would hold the
/// snapshot longer.
pub(super) fn pass(
    main: &Connection,
    fts: &mut Connection,
    plan: &Plan,
    pace: &Pace,
) -> rusqlite::Result<(i64, bool)> {
    let tx = fts.transaction()?;
    let outcome = match applied_seq(&tx, plan.source.name)? {
        None => {
            // One snapshot for the queue's end and every row (first start or forced rebuild).
            main.execute_batch("BEGIN")?;
            let built = rebuild(main, &tx, plan);
            main.execute_batch("COMMIT")?;
            built?
        }
        Some(start) => {
            // Chunk after chunk, each read in its own snapshot, into this one transaction.
            let mut applied = start;
            let mut indexed = 0;
            let outcome = loop {
                let read;
                (applied, read) = pace.step(|| apply_queue(main, &tx, plan, applied))?;
                indexed += read;
                if read < READ_CHUNK {
                    break (applied, false);
                }
                if indexed >= PASS_SIZE {
                    break (applied, true);
                }
            };
            if applied != start {
                tx.prepare_cached("UPDATE indexer_sources SET applied_seq = ?2 WHERE source = ?1")?
                    .execute(params![plan.source.name, applied])?;
            }
            outcome
        }
    };
    // Committing writes the buffered postings out as a segment, and may merge segments.
    pace.step(|| tx.commit())?;
    Ok(outcome)
}

/// Indexes every row of the source's table into its emptied FTS5 table; returns the queue's
/// end it covers.
pub(super) fn rebuild(
    main: &Connection,
    tx: &rusqlite::Transaction<'_>,
    plan: &Plan,
) -> rusqlite::Result<(i64, bool)> {
    let upto: i64 = main.query_row(&plan.queue_end, [], |r| r.get(0))?;
    tx.execute(&plan.clear, [])?;
    {
        let mut rows = main.prepare(&plan.read_all)?;
        let mut insert = tx.prepare(&plan.insert)?;
        let width = plan.source.columns.len() + 1;
        let mut it = rows.query([])?;
        while let Some(r) = it.next()? {
            for i in 0..width {
                insert.raw_bind_parameter(i + 1, ToSqlOutput::Borrowed(r.get_ref(i)?))?;
            }
            insert.raw_execute()?;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO indexer_sources(source, applied_seq, layout) VALUES (?1, ?2, ?3)",
        params![plan.source.name, upto, plan.layout],
    )?;
    Ok((upto, false))
}

/// Applies up to `READ_CHUNK` queue entries past `applied` (one statement, so one snapshot, read
/// in full before any index write). Returns the new watermark and how many entries were read.
pub(super) fn apply_queue(
    main: &Connection,
    tx: &rusqlite::Transaction<'_>,
    plan: &Plan,
    applied: i64,
) -> rusqlite::Result<(i64, i64)> {
    let width = plan.source.columns.len();
    let mut rows = main.prepare_cached(&plan.read_queue)?;
    let changes = rows
        .query_map(params![applied, READ_CHUNK], |r| {
            let exists: bool = r.get(2)?;
            let values = if exists {
                Some(
                    (0..width)
                        .map(|i| r.get::<_, Value>(3 + i))
                        .collect::<rusqlite::Result<Vec<_>>>()?,
                )
            } else {
                None
            };
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, values))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    drop(rows);
    let Some(&(last, ..)) = changes.last() else {
        return Ok((applied, 0));
    };
    let mut delete = tx.prepare_cached(&plan.delete)?;
    let mut insert = tx.prepare_cached(&plan.insert)?;
    for (_, doc, values) in &changes {
        delete.execute([doc])?;
        if let Some(values) = values {
            insert.raw_bind_parameter(1, doc)?;
            for (i, v) in values.iter().enumerate() {
                insert.raw_bind_parameter(i + 2, v)?;
            }
            insert.raw_execute()?;
        }
    }
    Ok((last, changes.len() as i64))
}
