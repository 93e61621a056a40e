//! The vector index on a connection: sqlite-vec registered for every connection, the
//! `memory_vec` table built for one model and kept in step with the stored vectors. It knows
//! nothing of the store or of embedders (`vectors` drives it).

use std::sync::Once;

use rusqlite::{Connection, OptionalExtension};

use crate::error::Result;
use crate::model::MemoryId;

/// Makes sqlite-vec available to every connection this process opens.
#[allow(unsafe_code)]
pub(crate) fn register_sqlite_vec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_vec_init has the signature SQLite expects of an extension entry point
        // (db, error message, API routines) and is registered once, before any connection.
        unsafe {
            type Init = unsafe extern "C" fn(
                *mut rusqlite::ffi::sqlite3,
                *mut *mut std::os::raw::c_char,
                *const rusqlite::ffi::sqlite3_api_routines,
            ) -> std::os::raw::c_int;
            let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init));
        }
    });
}

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Reads a vector written by [`to_blob`] into `out` (cleared first).
pub(crate) fn from_blob(blob: &[u8], out: &mut Vec<f32>) {
    out.clear();
    out.extend(blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
}

/// How the index is laid out, recorded after the model id in the `vector_model` setting: an
/// index of another layout is rebuilt from the stored vectors. `l2`: Euclidean distance, which
/// for unit vectors ranks exactly as cosine (similarity = 1 − d² / 2) and which sqlite-vec
/// computes with SIMD; its cosine distance is a scalar loop.
const LAYOUT: &str = "#l2";

/// The model the vector index is built for, if any (in the current layout).
pub(crate) fn indexed_model(conn: &Connection) -> Result<Option<String>> {
    let value: Option<String> =
        conn.query_row("SELECT value FROM settings WHERE key = 'vector_model'", [], |r| r.get(0)).optional()?;
    Ok(value.and_then(|v| v.strip_suffix(LAYOUT).map(str::to_string)))
}

/// Whether the vector index exists (it is created for the first embedder used).
pub(crate) fn has_index(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_schema WHERE name = 'memory_vec'")?
        .query_row([], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Removes a memory's vectors (all models) and its index entry.
pub(crate) fn delete_for(conn: &Connection, id: MemoryId, rid: i64) -> Result<()> {
    let n = conn.prepare_cached("DELETE FROM memory_vectors WHERE memory_id = ?1")?.execute([id.to_string()])?;
    if n > 0 {
        crate::sqlite::vector_scan::bump_version(conn)?;
    }
    if has_index(conn)? {
        conn.prepare_cached("DELETE FROM memory_vec WHERE rowid = ?1")?.execute([rid])?;
    }
    Ok(())
}

/// Fills the index from the stored vectors of the indexed model (after a replay renumbered
/// the memories, or after switching models).
pub(crate) fn reindex(conn: &Connection) -> Result<u64> {
    let Some(model) = indexed_model(conn)? else { return Ok(0) };
    crate::sqlite::vector_scan::bump_version(conn)?;
    conn.execute_batch("DELETE FROM memory_vec")?;
    let n = conn.execute(
        "INSERT INTO memory_vec (rowid, user_id, embedding) \
         SELECT m.rid, m.user_id, v.vector FROM memory_vectors v JOIN memories m ON m.id = v.memory_id \
         WHERE v.model = ?1",
        [model],
    )?;
    Ok(n as u64)
}

/// Creates (or re-creates, for another model) the index for the model `model_id` of `dim`
/// dimensions.
pub(crate) fn ensure(conn: &Connection, model_id: &str, dim: usize) -> Result<()> {
    if indexed_model(conn)?.as_deref() == Some(model_id) && has_index(conn)? {
        return Ok(());
    }
    conn.execute_batch("DROP TABLE IF EXISTS memory_vec")?;
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE memory_vec USING vec0(user_id text partition key, embedding float[{}] distance_metric=l2)",
        dim
    ))?;
    conn.execute(
        "INSERT INTO settings (key, value) VALUES ('vector_model', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [format!("{model_id}{LAYOUT}")],
    )?;
    reindex(conn)?;
    Ok(())
}
