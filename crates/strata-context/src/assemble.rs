//! The assembler. The system prompt and the new message are fixed; what is left of the budget
//! is shared out in two passes. First each section fills its share: the conversation newest
//! turn first (stopping at the first turn that does not fit, so what is kept is a contiguous
//! tail), the memories in order of value. Then whatever any section left unused goes to the
//! remaining turns and memories in the same orders. A memory that says what the prompt already
//! says is left out as a near-duplicate. Costs are counted exactly with the model's tokenizer
//! for everything that might fit; a candidate whose word count alone (a lower bound of its
//! tokens for every word-splitting tokenizer) exceeds what is left is dropped uncounted, which
//! is what keeps 10,000 candidates fast, with a pass giving up after a run of candidates that
//! did not fit. Finally the whole prompt is counted as sent; if token
//! merges across pieces ever made it exceed the budget, the least valuable memory goes and it
//! is counted again, so the budget is never exceeded.

use std::collections::{BTreeMap, HashMap, HashSet};

use strata_core::chat::{MEMORIES_CLOSE, MEMORIES_OPEN};
use strata_core::{ChatModel, Error, Message, Result, Role, ToolCall};
use strata_tokens::{REPLY_PRIMING, TokenManager, count_message, count_messages};

use crate::render::{body_for, item, passage_item};
use crate::report::{ConceptUse, Decision, HistoryReport, PassageDecision, Reason, Report, Section, SectionReport};
use crate::similar::Signature;
use crate::{Assembled, Candidate, ContextOptions, ContextRequest, Order, Passage, Placement};

/// The tool call that [`Placement::ToolResult`] answers.
pub const TOOL_NAME: &str = "recall_memories";
const TOOL_CALL_ID: &str = "strata_memories";
/// Items are costed with a two-digit label; the final count settles the difference.
const LABEL_FOR_COST: usize = 99;
/// After this many candidates in a row have not gone in (too large, or near-duplicates), a pass
/// stops looking: counting thousands of long shots would cost more than it finds.
const MISSES_BEFORE_GIVING_UP: usize = 48;
/// How fast a memory's value falls with its score relative to the best candidate's, in
/// [`Order::ValuePerToken`]: value = (score / best)^8. Fused scores are compressed — on LoCoMo
/// a memory at 80% of the best score is rarely needed — and value taken as the score itself
/// let short, barely related turns crowd out the evidence (recall within 2,000 tokens 0.70,
/// against 0.88 with this value and with [`Order::Score`]).
const VALUE_SHARPNESS: i32 = 8;
/// The block's sections, in the order they appear in it.
const BLOCK_SECTIONS: [Section; 4] = [Section::Facts, Section::Procedures, Section::Episodes, Section::Files];

/// What an item puts in the prompt: a memory recall found, or a passage of a file.
#[derive(Clone, Copy)]
enum Origin<'a> {
    Memory(&'a Candidate),
    Passage(&'a Passage),
}

impl<'a> Origin<'a> {
    fn memory(self) -> Option<&'a strata_core::Memory> {
        match self {
            Origin::Memory(c) => Some(&c.memory),
            Origin::Passage(_) => None,
        }
    }

    fn score(self) -> f64 {
        match self {
            Origin::Memory(c) => c.score,
            Origin::Passage(p) => p.score,
        }
    }

    /// How duplicates and the report name it: a memory's id, a passage's citation.
    fn id(self) -> String {
        match self {
            Origin::Memory(c) => c.memory.id.to_string(),
            Origin::Passage(p) => p.citation(),
        }
    }

    /// Its item in the block, labelled `[label]`.
    fn render(self, label: usize, body: &str) -> String {
        match self {
            Origin::Memory(c) => item(label, &c.memory, body),
            Origin::Passage(p) => passage_item(label, p, body),
        }
    }
}

struct Item<'a> {
    origin: Origin<'a>,
    section: Section,
    body: String,
    /// Rendered when first needed (most of 10,000 candidates never are).
    text: Option<String>,
    lower: usize,
    cost: Option<usize>,
    key: f64,
    signature: Option<Signature>,
    fate: Option<Reason>,
    /// The concept in the prompt whose summary stands for this memory: left out of the first
    /// pass, a candidate again for the room left (the concept expanded).
    covered_by: Option<String>,
}

/// The conversation in units that stay together (an assistant's tool calls with the tool
/// answers that follow), oldest first, with their cost.
fn history_units(tokens: &dyn TokenManager, history: &[Message]) -> Result<Vec<(std::ops::Range<usize>, usize)>> {
    let mut units: Vec<(std::ops::Range<usize>, usize)> = Vec::new();
    for (i, m) in history.iter().enumerate() {
        let cost = count_message(tokens, m)?;
        match units.last_mut() {
            Some((r, c)) if m.role == Role::Tool => {
                r.end = i + 1;
                *c += cost;
            }
            _ => units.push((i..i + 1, cost)),
        }
    }
    Ok(units)
}

/// The memory block's text with `parts` (heading and items per section).
fn block(preamble: &str, parts: &[(Section, Vec<String>)]) -> String {
    let mut s = String::new();
    if !preamble.trim().is_empty() {
        s.push_str(preamble.trim());
        s.push('\n');
    }
    s.push_str(MEMORIES_OPEN);
    s.push('\n');
    for (section, items) in parts.iter().filter(|(_, items)| !items.is_empty()) {
        s.push_str(section.heading());
        for i in items {
            s.push_str(i);
        }
    }
    s.push_str(MEMORIES_CLOSE);
    s
}

/// The messages that carry the memory block where `placement` puts it.
fn carriers(placement: Placement, block: String, query: &str) -> Vec<Message> {
    match placement {
        Placement::ToolResult => vec![
            Message {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: TOOL_CALL_ID.into(),
                    name: TOOL_NAME.into(),
                    arguments: serde_json::json!({ "query": query }).to_string(),
                }],
                tool_call_id: None,
            },
            Message { role: Role::Tool, content: block, tool_calls: vec![], tool_call_id: Some(TOOL_CALL_ID.into()) },
        ],
        _ => vec![Message::system(block)],
    }
}

struct Plan<'a> {
    tokens: &'a dyn TokenManager,
    room: usize,
    framing: usize,
    framed: bool,
    headings: HashMap<Section, usize>,
    used: HashMap<Section, usize>,
    seen: Vec<(Signature, String)>,
    duplicate_similarity: f64,
}

impl<'t> Plan<'t> {
    /// Nothing chosen yet: `available` tokens of room; the framing of the memory block (paid
    /// by its first item) and each section's heading (paid by its first) counted once.
    fn new(tokens: &'t dyn TokenManager, opts: &ContextOptions, query: &str, available: usize) -> Result<Plan<'t>> {
        let framing =
            count_messages(tokens, &carriers(opts.placement, block(&opts.preamble, &[]), query))? - REPLY_PRIMING;
        let mut headings = HashMap::new();
        for s in BLOCK_SECTIONS {
            headings.insert(s, tokens.count(s.heading())?);
        }
        Ok(Plan {
            tokens,
            room: available,
            framing,
            framed: false,
            headings,
            used: HashMap::new(),
            seen: Vec::new(),
            duplicate_similarity: opts.duplicate_similarity,
        })
    }

    /// Includes `it` if it fits in `quota` (what its section may still use, if limited) and
    /// the room left, and is not a near-duplicate (then its fate says so). Returns whether it
    /// went in. The first item of the block pays for its framing, the first of a section for
    /// the section's heading.
    fn try_include(&mut self, it: &mut Item<'_>, id: &str, quota: Option<usize>) -> Result<bool> {
        let used = self.used.get(&it.section).copied().unwrap_or(0);
        let heading = if used > 0 { 0 } else { self.headings[&it.section] };
        let framing = if self.framed { 0 } else { self.framing };
        let quota_left = quota.map_or(usize::MAX, |q| q.saturating_sub(used));
        let fits = |cost: usize| cost + heading <= quota_left && cost + heading + framing <= self.room;
        if !fits(it.lower) {
            return Ok(false);
        }
        let signature = it.signature.get_or_insert_with(|| Signature::of(&it.body));
        if let Some((_, of)) = self.seen.iter().find(|(s, _)| s.similarity(signature) >= self.duplicate_similarity) {
            it.fate = Some(Reason::Duplicate { of: of.clone() });
            return Ok(false);
        }
        let cost = match it.cost {
            Some(c) => c,
            None => {
                let text = it.text.get_or_insert_with(|| it.origin.render(LABEL_FOR_COST, &it.body));
                *it.cost.insert(self.tokens.count(text)?)
            }
        };
        if !fits(cost) {
            return Ok(false);
        }
        self.seen.push((signature.clone(), id.to_string()));
        self.room -= cost + heading + framing;
        self.framed = true;
        *self.used.entry(it.section).or_default() += cost + heading;
        it.fate = Some(Reason::Included);
        Ok(true)
    }
}

/// Assembles the prompt for `req` with `tokens` (the target model's tokenizer).
pub fn assemble(tokens: &dyn TokenManager, req: ContextRequest, opts: &ContextOptions) -> Result<Assembled> {
    assemble_with(tokens, req, opts, None)
}

/// [`assemble`], with the finished prompt also counted by the model it is for, where its
/// provider counts ([`ChatModel::count_prompt`]; Anthropic's endpoint, when `tokens` is an
/// estimate): if that count exceeds the budget, the overshoot is taken off the budget and the
/// least valuable parts go until both counts fit.
pub fn assemble_with(
    tokens: &dyn TokenManager,
    req: ContextRequest,
    opts: &ContextOptions,
    exact: Option<&dyn ChatModel>,
) -> Result<Assembled> {
    opts.validate()?;
    let frame = Frame::of(tokens, &req)?;
    let available = req.budget - frame.cost();
    let quota = quotas(opts, available, !req.passages.is_empty());
    let mut plan = Plan::new(tokens, opts, &req.message, available)?;
    let selection = select(&mut plan, &req, opts, &quota)?;
    fit(tokens, &req, opts, exact, &frame, &quota, selection)
}

/// What every prompt has whatever is chosen: the system prompt and the new message.
struct Frame {
    system: Option<Message>,
    user: Message,
    system_cost: usize,
    message_cost: usize,
}

impl Frame {
    /// The system prompt and the new message, counted; an error if they alone exceed the
    /// budget.
    fn of(tokens: &dyn TokenManager, req: &ContextRequest) -> Result<Frame> {
        let system = req.system.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(Message::system);
        let user = Message::user(req.message.clone());
        let system_cost = system.as_ref().map(|m| count_message(tokens, m)).transpose()?.unwrap_or(0);
        let message_cost = count_message(tokens, &user)?;
        let frame = Frame { system, user, system_cost, message_cost };
        if frame.cost() > req.budget {
            return Err(Error::invalid(format!(
                "a budget of {} tokens cannot hold the system prompt and the new message ({} tokens with their \
                 framing)",
                req.budget,
                frame.cost()
            )));
        }
        Ok(frame)
    }

    fn cost(&self) -> usize {
        REPLY_PRIMING + self.system_cost + self.message_cost
    }
}

/// Each section's share of what the frame leaves: with `passages` offered, the files' share
/// first and the others' of the rest.
fn quotas(opts: &ContextOptions, available: usize, passages: bool) -> HashMap<Section, usize> {
    let files = if passages { opts.shares.files } else { 0.0 };
    let share = |s: f64| (s * (1.0 - files) * available as f64).floor() as usize;
    [
        (Section::Facts, share(opts.shares.facts)),
        (Section::Procedures, share(opts.shares.procedures)),
        (Section::Episodes, share(opts.shares.episodes)),
        (Section::History, share(opts.shares.history)),
        (Section::Files, (files * available as f64).floor() as usize),
    ]
    .into_iter()
    .collect()
}

/// The candidates (memories, then passages; an item's index is its candidate's), rendered,
/// each once (a repeat is a duplicate from the start), and their indexes from the most to the
/// least valuable. Passages' scores are put on the memories' scale (the best passage level with
/// the best memory) for the room both compete for.
fn candidate_items<'a>(req: &'a ContextRequest, opts: &ContextOptions) -> (Vec<Item<'a>>, Vec<usize>) {
    let best = req.candidates.iter().map(|c| c.score).fold(f64::MIN_POSITIVE, f64::max);
    let best_passage = req.passages.iter().map(|p| p.score).fold(f64::MIN_POSITIVE, f64::max);
    let mut ids = HashSet::new();
    let mut items: Vec<Item> = Vec::with_capacity(req.candidates.len() + req.passages.len());
    let origins = req.candidates.iter().map(Origin::Memory).chain(req.passages.iter().map(Origin::Passage));
    for origin in origins {
        // The label is one word, an episode's date three more, a passage's citation its words.
        let (body, section, label_words, score, relative) = match origin {
            Origin::Memory(c) => {
                let words = if c.memory.kind() == strata_core::MemoryKind::Episodic { 4 } else { 1 };
                (body_for(&c.memory, &req.message), Section::of(c.memory.kind()), words, c.score, c.score / best)
            }
            Origin::Passage(p) => {
                let relative = p.score / best_passage;
                (p.text.clone(), Section::Files, 1 + p.citation().split_whitespace().count(), relative * best, relative)
            }
        };
        let lower = body.split_whitespace().count() + label_words;
        let estimate = (body.len() as f64 / 4.0 + 2.0 * label_words as f64).max(lower as f64);
        let key = match opts.order {
            Order::Score => score,
            Order::ValuePerToken => relative.max(0.0).powi(VALUE_SHARPNESS) / estimate,
        };
        let id = origin.id();
        let fate = (!ids.insert(id.clone())).then_some(Reason::Duplicate { of: id });
        items.push(Item {
            origin,
            section,
            body,
            text: None,
            lower,
            cost: None,
            key,
            signature: None,
            fate,
            covered_by: None,
        });
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| items[b].key.total_cmp(&items[a].key).then(a.cmp(&b)));
    (items, order)
}

/// What was chosen: the memories' fates, the summary of the conversation left out (if any)
/// and where the kept tail of the conversation starts.
struct Selection<'a> {
    items: Vec<Item<'a>>,
    order: Vec<usize>,
    summary: Option<Message>,
    kept_from: usize,
}

/// Chooses the conversation's tail and the memories: each section within its share first,
/// then the room any share left, to more of the conversation, its summary, more memories.
fn select<'a>(
    plan: &mut Plan<'_>,
    req: &'a ContextRequest,
    opts: &ContextOptions,
    quota: &HashMap<Section, usize>,
) -> Result<Selection<'a>> {
    let (mut items, order) = candidate_items(req, opts);
    // The conversation newest first, within its share; a summary of what is left out gets up
    // to a quarter of the share, set aside from the start.
    let units = history_units(plan.tokens, &req.history)?;
    let summary = history_summary(plan.tokens, req, &units, quota[&Section::History])?;
    let reserve = summary.as_ref().map(|m| count_message(plan.tokens, m)).transpose()?.unwrap_or(0).min(plan.room);
    plan.room -= reserve;
    let mut kept = 0; // units kept, from the newest
    let mut history_left = quota[&Section::History].saturating_sub(reserve);
    keep_history(plan, &req.history, &units, &mut kept, &mut history_left);
    fill_shares(plan, req, &mut items, &order, quota)?;

    let mut unlimited = usize::MAX;
    keep_history(plan, &req.history, &units, &mut kept, &mut unlimited);
    let summary = if kept < units.len() { summary } else { None };
    if summary.is_none() {
        plan.room += reserve;
    }
    let kept_from = units.get(units.len() - kept).map_or(req.history.len(), |u| u.0.start);
    fill_room(plan, req, &mut items, &order)?;
    Ok(Selection { items, order, summary, kept_from })
}

/// The summary of the earlier conversation, cut to a quarter of the conversation's share, if
/// the conversation is longer than its share and a summary was given.
fn history_summary(
    tokens: &dyn TokenManager,
    req: &ContextRequest,
    units: &[(std::ops::Range<usize>, usize)],
    share: usize,
) -> Result<Option<Message>> {
    let total: usize = units.iter().map(|u| u.1).sum();
    match req.history_summary.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) if total > share => {
            let prefix = "Summary of the earlier conversation:\n";
            let limit = (share / 4).saturating_sub(count_message(tokens, &Message::system(prefix))?);
            let cut = tokens.truncate(s, limit)?;
            Ok((!cut.trim().is_empty()).then(|| Message::system(format!("{prefix}{cut}"))))
        }
        _ => Ok(None),
    }
}

/// Memories in order of value, each within its section's share; a section stops looking after
/// a run of misses.
fn fill_shares(
    plan: &mut Plan<'_>,
    req: &ContextRequest,
    items: &mut [Item<'_>],
    order: &[usize],
    quota: &HashMap<Section, usize>,
) -> Result<()> {
    let mut misses: HashMap<Section, usize> = HashMap::new();
    let index = candidate_index(req);
    for &i in order {
        let section = items[i].section;
        let missed = misses.entry(section).or_default();
        if items[i].fate.is_none() && items[i].covered_by.is_none() && *missed < MISSES_BEFORE_GIVING_UP {
            let id = items[i].origin.id();
            if plan.try_include(&mut items[i], &id, Some(quota[&section]))? {
                *missed = 0;
                cover_members(items, i, &index, &id);
            } else {
                *missed += 1;
            }
        }
    }
    Ok(())
}

/// Each candidate's index by its memory's id.
fn candidate_index(req: &ContextRequest) -> HashMap<strata_core::MemoryId, usize> {
    req.candidates.iter().enumerate().map(|(i, c)| (c.memory.id, i)).collect()
}

/// When `concept` is a concept just included, marks its members among the candidates still
/// undecided as covered by it; a member its summary quotes whole has nothing to add and stays
/// out for good.
fn cover_members(items: &mut [Item<'_>], concept: usize, index: &HashMap<strata_core::MemoryId, usize>, id: &str) {
    let Some(memory) = items[concept].origin.memory().filter(|m| strata_core::concepts::is_concept(m)) else {
        return;
    };
    for m in strata_core::concepts::members(memory) {
        if let Some(&j) = index.get(&m)
            && items[j].fate.is_none()
        {
            if items[concept].body.contains(items[j].body.as_str()) {
                items[j].fate = Some(Reason::Covered { by: id.to_string() });
            } else {
                items[j].covered_by.get_or_insert_with(|| id.to_string());
            }
        }
    }
}

/// The memories still undecided, in order of value, within the room left; what does not go in
/// is over budget.
fn fill_room(plan: &mut Plan<'_>, req: &ContextRequest, items: &mut [Item<'_>], order: &[usize]) -> Result<()> {
    let mut missed = 0;
    let index = candidate_index(req);
    for &i in order {
        if items[i].fate.is_none() {
            let id = items[i].origin.id();
            if missed < MISSES_BEFORE_GIVING_UP && plan.try_include(&mut items[i], &id, None)? {
                missed = 0;
                cover_members(items, i, &index, &id);
            } else {
                missed += 1;
                let fate = match items[i].covered_by.take() {
                    Some(by) => Reason::Covered { by },
                    None => Reason::OverBudget,
                };
                items[i].fate.get_or_insert(fate);
            }
        }
    }
    Ok(())
}

/// Builds the prompt, counts it as sent (and by the model's own counter, where it has one),
/// and gives back the least valuable memory, then the oldest conversation, then the summary,
/// until it fits.
fn fit(
    tokens: &dyn TokenManager,
    req: &ContextRequest,
    opts: &ContextOptions,
    exact: Option<&dyn ChatModel>,
    frame: &Frame,
    quota: &HashMap<Section, usize>,
    selection: Selection<'_>,
) -> Result<Assembled> {
    let Selection { mut items, order, mut summary, kept_from } = selection;
    let budget = req.budget;
    let mut history: Vec<Message> = req.history[kept_from..].to_vec();
    let mut limit = budget;
    loop {
        let (messages, labels) = build(req, opts, &items, &frame.system, &summary, &history, &frame.user);
        let used = count_messages(tokens, &messages)?;
        if used <= limit {
            let counted = match exact.and_then(|m| m.count_prompt(&messages)) {
                Some(Ok(n)) => Some(n),
                Some(Err(e)) => return Err(Error::Model(e.message)),
                None => None,
            };
            match counted {
                Some(n) if n > budget => limit = limit.saturating_sub(n - budget).min(used.saturating_sub(1)),
                _ => {
                    let summary_cost = summary.as_ref().map(|m| count_message(tokens, m)).transpose()?.unwrap_or(0);
                    let fixed = Fixed { system: frame.system_cost, message: frame.message_cost, summary: summary_cost };
                    let mut a = report(tokens, opts, req, items, labels, messages, used, quota, fixed, history.len())?;
                    a.report.exact_used = counted;
                    a.report.exact_counter = exact.filter(|_| counted.is_some()).map(|m| m.provider().to_string());
                    return Ok(a);
                }
            }
            continue;
        }
        if let Some(&worst) = order.iter().rev().find(|&&i| items[i].fate == Some(Reason::Included)) {
            items[worst].fate = Some(Reason::OverBudget);
        } else if !history.is_empty() {
            let first = history_units(tokens, &history)?[0].0.end;
            history.drain(..first);
        } else if summary.is_some() {
            summary = None;
        } else {
            return Err(Error::invalid(format!("a budget of {budget} tokens cannot hold this prompt")));
        }
    }
}

/// Keeps older units of the conversation while each fits in `left` and the room, stopping at
/// the first that does not (what is kept stays contiguous). The kept messages join what
/// memories are compared with: a memory repeating the conversation adds nothing.
fn keep_history(
    plan: &mut Plan<'_>,
    history: &[Message],
    units: &[(std::ops::Range<usize>, usize)],
    kept: &mut usize,
    left: &mut usize,
) {
    while *kept < units.len() {
        let (range, cost) = &units[units.len() - 1 - *kept];
        if *cost > *left || *cost > plan.room {
            break;
        }
        *left -= cost;
        plan.room -= cost;
        *kept += 1;
        for m in &history[range.clone()] {
            plan.seen.push((Signature::of(&m.content), "conversation".into()));
        }
    }
}

/// The costs that do not depend on selection.
struct Fixed {
    system: usize,
    message: usize,
    summary: usize,
}

/// The included items' indexes in block order: facts, procedures and passages best first,
/// episodes in the order they happened.
fn block_order(items: &[Item<'_>]) -> Vec<(Section, Vec<usize>)> {
    BLOCK_SECTIONS
        .iter()
        .map(|&s| {
            let mut v: Vec<usize> = (0..items.len())
                .filter(|&i| items[i].section == s && items[i].fate == Some(Reason::Included))
                .collect();
            if s == Section::Episodes {
                v.sort_by_key(|&i| (items[i].origin.memory().map(|m| m.occurred_at()), i));
            } else {
                v.sort_by(|&a, &b| items[b].origin.score().total_cmp(&items[a].origin.score()).then(a.cmp(&b)));
            }
            (s, v)
        })
        .collect()
}

/// The messages, and each included item's label.
fn build(
    req: &ContextRequest,
    opts: &ContextOptions,
    items: &[Item<'_>],
    system: &Option<Message>,
    summary: &Option<Message>,
    history: &[Message],
    user: &Message,
) -> (Vec<Message>, HashMap<usize, usize>) {
    let mut labels = HashMap::new();
    let mut parts = Vec::new();
    for (section, members) in block_order(items) {
        let texts = members
            .iter()
            .map(|&i| {
                let label = labels.len() + 1;
                labels.insert(i, label);
                items[i].origin.render(label, &items[i].body)
            })
            .collect();
        parts.push((section, texts));
    }
    let memories = (!labels.is_empty()).then(|| carriers(opts.placement, block(&opts.preamble, &parts), &req.message));
    let mut messages: Vec<Message> = system.iter().cloned().collect();
    let put = |at: Placement, messages: &mut Vec<Message>| {
        if opts.placement == at {
            messages.extend(memories.iter().flatten().cloned());
        }
    };
    put(Placement::AfterSystem, &mut messages);
    messages.extend(summary.iter().cloned());
    messages.extend(history.iter().cloned());
    put(Placement::BeforeLastUser, &mut messages);
    messages.push(user.clone());
    put(Placement::ToolResult, &mut messages);
    (messages, labels)
}

/// Each concept in the prompt, in prompt order, with the members left out for it and what they
/// would have cost.
fn concept_uses(
    tokens: &dyn TokenManager,
    req: &ContextRequest,
    items: &[Item<'_>],
    labels: &HashMap<usize, usize>,
) -> Result<Vec<ConceptUse>> {
    let mut shown: Vec<(usize, usize)> = labels
        .iter()
        .filter(|(i, _)| items[**i].origin.memory().is_some_and(strata_core::concepts::is_concept))
        .map(|(i, l)| (*l, *i))
        .collect();
    shown.sort_unstable();
    let mut uses = Vec::with_capacity(shown.len());
    for (_, i) in shown {
        let id = req.candidates[i].memory.id;
        let by = id.to_string();
        let (mut covered, mut covered_tokens) = (Vec::new(), 0);
        for it in items.iter().filter(|it| matches!(&it.fate, Some(Reason::Covered { by: b }) if *b == by)) {
            covered.extend(it.origin.memory().map(|m| m.id));
            covered_tokens += match it.cost {
                Some(c) => c,
                None => tokens.count(&it.origin.render(LABEL_FOR_COST, &it.body))?,
            };
        }
        let cost = items[i].cost.unwrap_or(items[i].lower);
        uses.push(ConceptUse { id, tokens: cost, covered, saved: covered_tokens as i64 - cost as i64, covered_tokens });
    }
    Ok(uses)
}

#[allow(clippy::too_many_arguments)]
fn report(
    tokens: &dyn TokenManager,
    opts: &ContextOptions,
    req: &ContextRequest,
    items: Vec<Item<'_>>,
    labels: HashMap<usize, usize>,
    messages: Vec<Message>,
    used: usize,
    quota: &HashMap<Section, usize>,
    fixed: Fixed,
    history_kept: usize,
) -> Result<Assembled> {
    let concepts = concept_uses(tokens, req, &items, &labels)?;
    let (mut included, mut dropped, mut passages) = (Vec::new(), Vec::new(), Vec::new());
    for (i, it) in items.iter().enumerate() {
        let (label, tokens) = (labels.get(&i).copied(), it.cost.unwrap_or(it.lower));
        let reason = it.fate.clone().unwrap_or(Reason::OverBudget);
        match it.origin {
            Origin::Memory(c) => {
                let d = Decision {
                    id: c.memory.id,
                    label,
                    section: it.section,
                    score: c.score,
                    tokens,
                    tokens_exact: it.cost.is_some(),
                    value_per_token: c.score / tokens.max(1) as f64,
                    reason,
                    why: c.why.clone(),
                };
                if label.is_some() { included.push(d) } else { dropped.push(d) }
            }
            Origin::Passage(p) => passages.push(PassageDecision {
                dataset: p.dataset.clone(),
                source: p.source.clone(),
                place: p.place.clone(),
                text: p.text.clone(),
                label,
                score: p.score,
                tokens,
                reason,
            }),
        }
    }
    included.sort_by_key(|d: &Decision| d.label);
    dropped.sort_by(|a: &Decision, b: &Decision| b.score.total_cmp(&a.score));
    passages.sort_by(|a: &PassageDecision, b: &PassageDecision| {
        (a.label.is_none(), a.label).cmp(&(b.label.is_none(), b.label)).then(b.score.total_cmp(&a.score))
    });

    let mut sections: BTreeMap<Section, SectionReport> = BTreeMap::new();
    if fixed.system > 0 {
        sections.insert(Section::System, SectionReport { tokens: fixed.system, items: 1, share: None });
    }
    let mut history_tokens = fixed.summary;
    for m in &req.history[req.history.len() - history_kept..] {
        history_tokens += count_message(tokens, m)?;
    }
    sections.insert(
        Section::History,
        SectionReport {
            tokens: history_tokens,
            items: history_kept + usize::from(fixed.summary > 0),
            share: quota.get(&Section::History).copied(),
        },
    );
    for s in BLOCK_SECTIONS.into_iter().filter(|s| *s != Section::Files || !req.passages.is_empty()) {
        let members: Vec<&Item> =
            items.iter().filter(|it| it.section == s && it.fate == Some(Reason::Included)).collect();
        let heading = if members.is_empty() { 0 } else { tokens.count(s.heading())? };
        sections.insert(
            s,
            SectionReport {
                tokens: members.iter().map(|it| it.cost.unwrap_or(it.lower)).sum::<usize>() + heading,
                items: members.len(),
                share: quota.get(&s).copied(),
            },
        );
    }
    sections.insert(Section::Message, SectionReport { tokens: fixed.message, items: 1, share: None });
    let parts: usize = sections.values().map(|s| s.tokens).sum();
    sections.insert(Section::Framing, SectionReport { tokens: used.saturating_sub(parts), items: 0, share: None });
    Ok(Assembled {
        report: Report {
            tokenizer: tokens.name().to_string(),
            exact: tokens.is_exact(),
            budget: req.budget,
            used,
            exact_used: None,
            exact_counter: None,
            utilization: if req.budget == 0 { 0.0 } else { used as f64 / req.budget as f64 },
            placement: opts.placement,
            sections,
            included,
            dropped,
            history: HistoryReport {
                messages: req.history.len(),
                included: history_kept,
                dropped: req.history.len() - history_kept,
                summarized: fixed.summary > 0,
            },
            concepts,
            passages,
        },
        messages,
    })
}
