//! Seed 003's `update_context` done with the assembler: a [`StoreMemory`] whose context
//! transform recalls for the last user message and rebuilds the context within a token budget.

use std::collections::HashMap;

use strata_core::{
    MemoryEntry, MemoryId, MemoryProtocol, Message, QueryOptions, QueryResult, Result, Role, StoreMemory,
    UpdateContextResult,
};
use strata_tokens::TokenManager;

use crate::{Assembled, Candidate, ContextOptions, ContextRequest, Report, assemble};

/// A store memory that transforms model contexts with the token-budgeted assembler.
pub struct BudgetedMemory {
    memory: StoreMemory,
    tokens: Box<dyn TokenManager>,
    budget: usize,
    options: ContextOptions,
    candidates: usize,
    last: Option<Report>,
}

impl BudgetedMemory {
    /// `memory`, assembling contexts of at most `budget` tokens counted by `tokens`.
    pub fn new(memory: StoreMemory, tokens: Box<dyn TokenManager>, budget: usize) -> BudgetedMemory {
        BudgetedMemory { memory, tokens, budget, options: ContextOptions::default(), candidates: 50, last: None }
    }

    /// Assembles with `options`.
    pub fn with_options(mut self, options: ContextOptions) -> BudgetedMemory {
        self.options = options;
        self
    }

    /// The report of the last `update_context`.
    pub fn last_report(&self) -> Option<&Report> {
        self.last.as_ref()
    }
}

impl MemoryProtocol for BudgetedMemory {
    fn name(&self) -> &str {
        self.memory.name()
    }

    fn query(&mut self, query: &str, options: QueryOptions) -> Result<Vec<QueryResult>> {
        self.memory.query(query, options)
    }

    fn add(&mut self, entry: MemoryEntry) -> Result<()> {
        self.memory.add(entry)
    }

    fn clear(&mut self) -> Result<()> {
        self.memory.clear()
    }

    fn close(self) -> Result<()> {
        self.memory.close()
    }

    /// The context rebuilt: its first system message stays the system prompt, its last user
    /// message is the new message, what lies between is the conversation; memories recalled
    /// for the message are placed as the options say, all within the budget.
    fn update_context(&mut self, context: &mut Vec<Message>) -> Result<UpdateContextResult> {
        let Some(at) = context.iter().rposition(|m| m.role == Role::User) else {
            return Ok(UpdateContextResult::default());
        };
        let message = context[at].content.clone();
        let system = (context.first().map(|m| m.role) == Some(Role::System)).then(|| context[0].content.clone());
        let start = usize::from(system.is_some());
        let mut history: Vec<Message> = context[start..at].to_vec();
        history.extend(context[at + 1..].iter().cloned());
        let recalled = self.memory.recall(&message, self.candidates)?;
        let entries: HashMap<MemoryId, MemoryEntry> =
            recalled.iter().filter_map(|r| MemoryEntry::of(&r.memory.content).map(|e| (r.memory.id, e))).collect();
        let candidates = recalled.into_iter().map(Candidate::from).collect();
        let req = ContextRequest { system, history, message, candidates, budget: self.budget, ..Default::default() };
        let Assembled { messages, report } = assemble(self.tokens.as_ref(), req, &self.options)?;
        *context = messages;
        let memories = report
            .included
            .iter()
            .filter_map(|d| entries.get(&d.id).map(|e| QueryResult { entry: e.clone(), score: d.score }))
            .collect();
        self.last = Some(report);
        Ok(UpdateContextResult { memories })
    }
}
