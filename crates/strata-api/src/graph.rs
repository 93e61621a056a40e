//! Semantic memory seen as a knowledge graph, in the shapes of the reference MCP memory
//! server (`@modelcontextprotocol/server-memory`): an **entity** is a concept (its name the
//! concept key, its type the `entity_type` fact, its observations the `observations` fact),
//! a **relation** is a link between two concepts. Concepts written by other means show up as
//! entities too, each of their other facts read as an observation ("name: value"), so a
//! client that only speaks the graph tools still sees everything semantic.
//!
//! Every call is one transaction: a batch with one bad item writes nothing.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use strata_core::error::excerpt;
use strata_core::interchange::json;
use strata_core::{
    Concept, Content, EventMeta, FactValue, Facts, Filter, Memory, MemoryId, MemoryKind, NewMemory, Source, StoreTx,
};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// The fact holding an entity's type.
pub const ENTITY_TYPE: &str = "entity_type";
/// The fact holding an entity's observations.
pub const OBSERVATIONS: &str = "observations";
/// The type shown for a concept that was not written as an entity.
pub const CONCEPT_TYPE: &str = "concept";
/// The most entities one read returns (the rest: narrow it with search or open by name).
pub const MAX_ENTITIES: usize = 1_000;

/// An entity: a named thing and what has been observed about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Entity {
    /// The entity's name (unique in the graph).
    pub name: String,
    /// Its type, e.g. "person", "organization", "event".
    #[serde(rename = "entityType")]
    pub entity_type: String,
    /// Facts about it, one short sentence each.
    pub observations: Vec<String>,
}

/// A directed relation between two entities, in active voice ("works_at").
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Relation {
    /// The entity the relation starts at.
    pub from: String,
    /// The entity it points to.
    pub to: String,
    /// How they relate.
    #[serde(rename = "relationType")]
    pub relation_type: String,
}

/// Entities and the relations among them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Graph {
    /// The entities.
    pub entities: Vec<Entity>,
    /// Relations with at least one end among the entities.
    pub relations: Vec<Relation>,
    /// Set when there were more than [`MAX_ENTITIES`] entities and only the first were read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Observations to add to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ObservationAddition {
    /// The entity.
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// The observations to add.
    pub contents: Vec<String>,
}

/// What [`Engine::graph_add_observations`] added to one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ObservationsAdded {
    /// The entity.
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// The observations that were new.
    #[serde(rename = "addedObservations")]
    pub added_observations: Vec<String>,
}

/// Observations to remove from one entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ObservationDeletion {
    /// The entity.
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// The observations to remove.
    pub observations: Vec<String>,
}

/// What importing a `memory.json` file did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GraphImport {
    /// Entities created.
    pub entities_created: u64,
    /// Entities that existed and gained observations.
    pub entities_merged: u64,
    /// Relations created.
    pub relations_created: u64,
    /// Relations the file holds whose ends are not both entities (the reference server
    /// accepts those): not imported, listed here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relations_skipped: Vec<Relation>,
}

/// One line of a `memory.json` file.
#[derive(Deserialize)]
#[serde(try_from = "LineFields")]
enum Line {
    Entity(Entity),
    Relation(Relation),
}

/// A line as written: the fields either kind may have, in a plain struct so that a refusal
/// names its field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineFields {
    #[serde(rename = "type")]
    kind: LineKind,
    name: Option<String>,
    #[serde(rename = "entityType")]
    entity_type: Option<String>,
    observations: Option<Vec<String>>,
    from: Option<String>,
    to: Option<String>,
    #[serde(rename = "relationType")]
    relation_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum LineKind {
    Entity,
    Relation,
}

impl TryFrom<LineFields> for Line {
    type Error = String;

    fn try_from(f: LineFields) -> Result<Line, String> {
        let kind = match f.kind {
            LineKind::Entity => "an entity",
            LineKind::Relation => "a relation",
        };
        let need = |value: Option<String>, field: &str| {
            value.ok_or_else(|| format!("field `{field}`: missing ({kind} line needs it)"))
        };
        let absent = |present: bool, field: &str| match present {
            true => Err(format!("field `{field}`: {kind} line has no `{field}`")),
            false => Ok(()),
        };
        Ok(match f.kind {
            LineKind::Entity => {
                absent(f.from.is_some(), "from")?;
                absent(f.to.is_some(), "to")?;
                absent(f.relation_type.is_some(), "relationType")?;
                Line::Entity(Entity {
                    name: need(f.name, "name")?,
                    entity_type: need(f.entity_type, "entityType")?,
                    observations: f.observations.unwrap_or_default(),
                })
            }
            LineKind::Relation => {
                absent(f.name.is_some(), "name")?;
                absent(f.entity_type.is_some(), "entityType")?;
                absent(f.observations.is_some(), "observations")?;
                Line::Relation(Relation {
                    from: need(f.from, "from")?,
                    to: need(f.to, "to")?,
                    relation_type: need(f.relation_type, "relationType")?,
                })
            }
        })
    }
}

/// The entity a concept is.
pub fn entity_of(c: &Concept) -> Entity {
    let entity_type = match c.facts.get(ENTITY_TYPE) {
        Some(FactValue::Text(t)) => t.clone(),
        _ => CONCEPT_TYPE.to_string(),
    };
    let mut observations = Vec::new();
    if let Some(FactValue::List(items)) = c.facts.get(OBSERVATIONS) {
        observations.extend(items.iter().map(fact_text));
    }
    for (name, value) in &c.facts {
        if name != ENTITY_TYPE && name != OBSERVATIONS {
            observations.push(format!("{name}: {}", fact_text(value)));
        }
    }
    Entity { name: c.key.clone(), entity_type, observations }
}

fn fact_text(v: &FactValue) -> String {
    match v {
        FactValue::Text(t) => t.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn observation_list(facts: &Facts) -> Vec<String> {
    match facts.get(OBSERVATIONS) {
        Some(FactValue::List(items)) => items.iter().map(fact_text).collect(),
        _ => Vec::new(),
    }
}

fn set_observations(facts: &mut Facts, observations: Vec<String>) {
    facts.insert(OBSERVATIONS.to_string(), FactValue::List(observations.into_iter().map(FactValue::Text).collect()));
}

fn concept(m: &Memory) -> Option<&Concept> {
    match &m.content {
        Content::Semantic(c) => Some(c),
        _ => None,
    }
}

fn checked(what: &str, s: &str) -> ApiResult<()> {
    if s.trim().is_empty() {
        return Err(ApiError::invalid(format!("{what} must not be empty")));
    }
    Ok(())
}

/// Whose graph a write works on: names resolve to the caller's own concept first (for an
/// agent), then the shared one.
struct Who {
    user: String,
    agent: Option<String>,
}

impl Who {
    fn entity(&self, tx: &StoreTx<'_>, name: &str) -> strata_core::Result<Option<Memory>> {
        if let Some(agent) = self.agent.as_deref()
            && let Some(m) = tx.find_by_key(&self.user, Some(agent), Some(MemoryKind::Semantic), name)?.pop()
        {
            return Ok(Some(m));
        }
        Ok(tx.find_by_key(&self.user, None, Some(MemoryKind::Semantic), name)?.pop())
    }

    fn existing(&self, tx: &StoreTx<'_>, name: &str) -> ApiResult<Memory> {
        self.entity(tx, name)?.ok_or_else(|| ApiError::new(ErrorCode::NotFound, format!("no entity named '{name}'")))
    }
}

/// A write's context: who, its event metadata, and the template for new memories.
struct GraphTx<'a> {
    who: Who,
    meta: EventMeta,
    template: NewMemory,
    tx: StoreTx<'a>,
}

impl GraphTx<'_> {
    fn create_entity(&mut self, e: &Entity) -> ApiResult<Memory> {
        checked("an entity's name", &e.name)?;
        checked("an entity's type", &e.entity_type)?;
        let mut facts = Facts::new();
        facts.insert(ENTITY_TYPE.to_string(), FactValue::Text(e.entity_type.clone()));
        set_observations(&mut facts, dedup(&e.observations));
        let content = Content::Semantic(Concept { key: e.name.clone(), facts });
        Ok(self.tx.create(content, self.template.clone(), &self.meta)?)
    }

    /// Adds observations an entity lacks; returns the ones added.
    fn observe(&mut self, m: Memory, contents: &[String]) -> ApiResult<Vec<String>> {
        let Some(c) = concept(&m) else { return Ok(Vec::new()) };
        let mut facts = c.facts.clone();
        let mut all = observation_list(&facts);
        let known: HashSet<String> = entity_of(c).observations.into_iter().collect();
        let mut added = Vec::new();
        for o in contents {
            checked("an observation", o)?;
            if !known.contains(o) && !added.contains(o) {
                added.push(o.clone());
            }
        }
        if !added.is_empty() {
            all.extend(added.iter().cloned());
            set_observations(&mut facts, all);
            let content = Content::Semantic(Concept { key: c.key.clone(), facts });
            self.tx.update_content(m.id, content, strata_core::Expected::Exact(m.version), &self.meta)?;
        }
        Ok(added)
    }

    /// Creates an imported entity, or merges its observations into the one of that name.
    fn import_entity(&mut self, e: Entity, counts: &mut GraphImport) -> ApiResult<()> {
        match self.who.entity(&self.tx, &e.name)? {
            Some(m) => {
                if !self.observe(m, &e.observations)?.is_empty() {
                    counts.entities_merged += 1;
                }
            }
            None => {
                self.create_entity(&e)?;
                counts.entities_created += 1;
            }
        }
        Ok(())
    }

    /// Links an imported relation, or lists it as skipped when an end is not an entity.
    fn import_relation(&mut self, r: Relation, counts: &mut GraphImport) -> ApiResult<()> {
        let (Some(from), Some(to)) = (self.who.entity(&self.tx, &r.from)?, self.who.entity(&self.tx, &r.to)?) else {
            counts.relations_skipped.push(r);
            return Ok(());
        };
        checked("a relation's type", &r.relation_type)?;
        if self.tx.link(from.id, to.id, &r.relation_type, &self.meta)?.version != from.version {
            counts.relations_created += 1;
        }
        Ok(())
    }

    fn ends(&self, r: &Relation) -> ApiResult<(MemoryId, MemoryId)> {
        checked("a relation's type", &r.relation_type)?;
        let from = self.who.existing(&self.tx, &r.from)?;
        let to = self.who.existing(&self.tx, &r.to)?;
        Ok((from.id, to.id))
    }
}

/// A refusal of one imported line's item as an import error naming the line; failures that
/// are not the file's (the disk, the lock) stay as they are.
fn at_line(file: &str, line: usize, what: &str, e: ApiError) -> ApiError {
    match e.code {
        ErrorCode::InvalidInput | ErrorCode::DuplicateKey | ErrorCode::NotFound | ErrorCode::Forgotten => {
            strata_core::Error::bad_import(file, line, format!("{what}: {}", e.message)).into()
        }
        _ => e,
    }
}

fn dedup(items: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    items.iter().filter(|o| seen.insert(o.as_str())).cloned().collect()
}

impl Engine {
    /// Runs `f` in one write transaction; nothing is kept when it fails.
    fn graph_write<T>(&mut self, f: impl FnOnce(&mut GraphTx<'_>) -> ApiResult<T>) -> ApiResult<T> {
        let who = Who { user: self.options().user_id.clone(), agent: self.options().agent_id.clone() };
        let meta = self.meta();
        let template = NewMemory {
            scope: self.scope(None),
            source: Source::app(self.options().client.clone()),
            ..Default::default()
        };
        let out = {
            let tx = self.store().write()?;
            let mut w = GraphTx { who, meta, template, tx };
            let out = f(&mut w)?;
            w.tx.commit()?;
            out
        };
        self.wrote();
        Ok(out)
    }

    /// Creates the entities whose names are new; returns those (existing names are skipped,
    /// as the reference server does).
    pub fn graph_create_entities(&mut self, entities: &[Entity]) -> ApiResult<Vec<Entity>> {
        self.graph_write(|w| {
            let mut created = Vec::new();
            let mut names = HashSet::new();
            for e in entities {
                if !names.insert(e.name.as_str()) || w.who.entity(&w.tx, &e.name)?.is_some() {
                    continue;
                }
                w.create_entity(e)?;
                created.push(Entity { observations: dedup(&e.observations), ..e.clone() });
            }
            Ok(created)
        })
    }

    /// Creates the relations that are new; returns those. Both ends must exist.
    pub fn graph_create_relations(&mut self, relations: &[Relation]) -> ApiResult<Vec<Relation>> {
        self.graph_write(|w| {
            let mut created = Vec::new();
            for r in relations {
                let (from, to) = w.ends(r)?;
                let before = w.tx.current(from)?;
                let after = w.tx.link(from, to, &r.relation_type, &w.meta)?;
                if after.version != before.version {
                    created.push(r.clone());
                }
            }
            Ok(created)
        })
    }

    /// Adds observations to existing entities; returns what was new for each.
    pub fn graph_add_observations(&mut self, additions: &[ObservationAddition]) -> ApiResult<Vec<ObservationsAdded>> {
        self.graph_write(|w| {
            let mut out = Vec::new();
            for a in additions {
                let m = w.who.existing(&w.tx, &a.entity_name)?;
                let added = w.observe(m, &a.contents)?;
                out.push(ObservationsAdded { entity_name: a.entity_name.clone(), added_observations: added });
            }
            Ok(out)
        })
    }

    /// Forgets entities (their content erased, as `forget` does) and every relation to or
    /// from them. Names that do not exist are skipped. Returns the names deleted.
    pub fn graph_delete_entities(&mut self, names: &[String]) -> ApiResult<Vec<String>> {
        self.graph_write(|w| {
            let mut deleted = Vec::new();
            for name in names {
                let Some(m) = w.who.entity(&w.tx, name)? else { continue };
                for (source, relation) in w.tx.linking_to(m.id)? {
                    w.tx.unlink(source, m.id, &relation, &w.meta)?;
                }
                w.tx.forget(m.id, &w.meta)?;
                deleted.push(name.clone());
            }
            Ok(deleted)
        })
        .and_then(|deleted| {
            if !deleted.is_empty() {
                self.store().scrub()?;
            }
            Ok(deleted)
        })
    }

    /// Removes observations from entities (those not present are ignored). An observation
    /// read from another fact ("name: value") removes that fact.
    pub fn graph_delete_observations(&mut self, deletions: &[ObservationDeletion]) -> ApiResult<u64> {
        self.graph_write(|w| {
            let mut removed = 0;
            for d in deletions {
                let Some(m) = w.who.entity(&w.tx, &d.entity_name)? else { continue };
                let Some(c) = concept(&m) else { continue };
                let gone: HashSet<&str> = d.observations.iter().map(String::as_str).collect();
                let mut facts = c.facts.clone();
                let list = observation_list(&facts);
                let kept: Vec<String> = list.iter().filter(|o| !gone.contains(o.as_str())).cloned().collect();
                let mut n = list.len() - kept.len();
                if n > 0 {
                    set_observations(&mut facts, kept);
                }
                facts.retain(|name, value| {
                    let drop = name != ENTITY_TYPE
                        && name != OBSERVATIONS
                        && gone.contains(format!("{name}: {}", fact_text(value)).as_str());
                    n += usize::from(drop);
                    !drop
                });
                if n > 0 {
                    if facts.is_empty() {
                        set_observations(&mut facts, Vec::new());
                    }
                    let content = Content::Semantic(Concept { key: c.key.clone(), facts });
                    w.tx.update_content(m.id, content, strata_core::Expected::Exact(m.version), &w.meta)?;
                    removed += n as u64;
                }
            }
            Ok(removed)
        })
    }

    /// Removes relations (those not present are ignored). Returns how many were removed.
    pub fn graph_delete_relations(&mut self, relations: &[Relation]) -> ApiResult<u64> {
        self.graph_write(|w| {
            let mut removed = 0;
            for r in relations {
                let (Some(from), Some(to)) = (w.who.entity(&w.tx, &r.from)?, w.who.entity(&w.tx, &r.to)?) else {
                    continue;
                };
                removed += u64::from(w.tx.unlink(from.id, to.id, &r.relation_type, &w.meta)?);
            }
            Ok(removed)
        })
    }

    /// The whole graph this caller sees (at most [`MAX_ENTITIES`] entities).
    pub fn graph_read(&self) -> ApiResult<Graph> {
        self.graph_where(|_| true)
    }

    /// Entities whose name, type or an observation contains `query` (case-insensitive), and
    /// their relations.
    pub fn graph_search(&self, query: &str) -> ApiResult<Graph> {
        let q = query.to_lowercase();
        self.graph_where(|e| {
            e.name.to_lowercase().contains(&q)
                || e.entity_type.to_lowercase().contains(&q)
                || e.observations.iter().any(|o| o.to_lowercase().contains(&q))
        })
    }

    /// The named entities (names not found are skipped) and their relations.
    pub fn graph_open(&self, names: &[String]) -> ApiResult<Graph> {
        let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
        self.graph_where(|e| wanted.contains(e.name.as_str()))
    }

    /// The entities the caller sees that `keep` accepts, and their relations. An
    /// agent's own concept hides a shared one of the same name.
    fn graph_where(&self, keep: impl Fn(&Entity) -> bool) -> ApiResult<Graph> {
        let filter = self.scoped(Filter { kinds: vec![MemoryKind::Semantic], ..Default::default() });
        let mut kept: Vec<(Memory, Entity)> = Vec::new();
        let mut names: HashMap<MemoryId, String> = HashMap::new();
        let mut own: HashSet<String> = HashSet::new();
        let mut truncated = false;
        let mut cursor: Option<String> = None;
        loop {
            let page = self.store_view().list(&filter, 1000, cursor.as_deref())?;
            for m in page.items {
                let Some(c) = concept(&m) else { continue };
                let e = entity_of(c);
                if m.scope.agent_id.is_some() && m.scope.agent_id == self.options().agent_id {
                    own.insert(e.name.clone());
                }
                names.insert(m.id, e.name.clone());
                if keep(&e) {
                    kept.push((m, e));
                }
            }
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        // A shared concept the agent has its own of goes; oldest first, as a file would list them.
        kept.retain(|(m, e)| m.scope.agent_id.is_some() || !own.contains(&e.name));
        kept.reverse();
        if kept.len() > MAX_ENTITIES {
            kept.truncate(MAX_ENTITIES);
            truncated = true;
        }
        // Relations with at least one end among the entities (as the reference server now
        // answers: a node's connections show without reading the whole graph); the other end
        // must be a concept this caller sees.
        let inside: HashSet<MemoryId> = kept.iter().map(|(m, _)| m.id).collect();
        let mut relations = BTreeSet::new();
        let mut add = |from: MemoryId, to: MemoryId, relation: &str| {
            if let (Some(f), Some(t)) = (names.get(&from), names.get(&to)) {
                relations.insert(Relation { from: f.clone(), to: t.clone(), relation_type: relation.to_string() });
            }
        };
        for (m, _) in &kept {
            for l in &m.links {
                add(m.id, l.target, &l.relation);
            }
            for (source, relation) in self.store_view().linking_to(m.id)? {
                if !inside.contains(&source) {
                    add(source, m.id, &relation);
                }
            }
        }
        Ok(Graph {
            entities: kept.into_iter().map(|(_, e)| e).collect(),
            relations: relations.into_iter().collect(),
            truncated,
        })
    }

    /// Imports a reference-server `memory.json` (JSON Lines of entities and relations) in one
    /// transaction: new entities are created, existing ones gain the observations they lack,
    /// relations are linked (those with a missing end are skipped and listed). A malformed line
    /// names its number and nothing is written.
    pub fn graph_import(&mut self, name: &str, input: &mut dyn BufRead) -> ApiResult<GraphImport> {
        self.graph_import_with(name, input, &mut strata_core::interchange::no_tick)
    }

    /// [`Engine::graph_import`], reporting to `tick` line by line; an error from `tick` rolls
    /// the whole import back. Every line is read strictly (one JSON object, no key twice), and
    /// a line whose entity or relation is refused names its number.
    pub fn graph_import_with(
        &mut self,
        name: &str,
        input: &mut dyn BufRead,
        tick: strata_core::interchange::Tick,
    ) -> ApiResult<GraphImport> {
        let mut lines = Vec::new();
        for line in json::lines(name, input) {
            let (n, text) = line?;
            lines.push((n, json::parse_in::<Line>(name, n, &text)?));
        }
        self.graph_write(|w| {
            let mut counts = GraphImport::default();
            let mut relations = Vec::new();
            let total = lines.len() as u64;
            for (done, (n, line)) in lines.into_iter().enumerate() {
                tick(done as u64, total)?;
                match line {
                    Line::Entity(entity) => {
                        let what = format!("entity '{}'", excerpt(&entity.name));
                        w.import_entity(entity, &mut counts).map_err(|e| at_line(name, n, &what, e))?;
                    }
                    Line::Relation(r) => relations.push((n, r)),
                }
            }
            // Relations after entities: a file may list a relation before its ends.
            for (n, r) in relations {
                let what = format!("relation '{}' → '{}'", excerpt(&r.from), excerpt(&r.to));
                w.import_relation(r, &mut counts).map_err(|e| at_line(name, n, &what, e))?;
            }
            Ok(counts)
        })
    }

    /// Writes the graph this caller sees as a `memory.json` (JSON Lines); returns the lines.
    pub fn graph_export(&self, out: &mut dyn Write) -> ApiResult<u64> {
        self.graph_export_with(out, &mut strata_core::interchange::no_tick)
    }

    /// [`Engine::graph_export`], reporting to `tick` as lines are written (and stopped by it).
    pub fn graph_export_with(&self, out: &mut dyn Write, tick: strata_core::interchange::Tick) -> ApiResult<u64> {
        let graph = self.graph_read()?;
        let total = (graph.entities.len() + graph.relations.len()) as u64;
        let io = |e: std::io::Error| ApiError::new(ErrorCode::Io, format!("cannot write the graph: {e}"));
        let mut n = 0;
        for e in &graph.entities {
            let line = serde_json::json!({"type": "entity", "name": e.name, "entityType": e.entity_type, "observations": e.observations});
            writeln!(out, "{line}").map_err(io)?;
            n += 1;
            tick(n, total)?;
        }
        for r in &graph.relations {
            let line =
                serde_json::json!({"type": "relation", "from": r.from, "to": r.to, "relationType": r.relation_type});
            writeln!(out, "{line}").map_err(io)?;
            n += 1;
            tick(n, total)?;
        }
        Ok(n)
    }
}
