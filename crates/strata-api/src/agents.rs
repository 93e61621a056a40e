//! Agents and their runs through the front door (issue 43): the caller's own, as
//! [`strata_core::agents`] and [`strata_core::agent_runs`] keep them. The loop that runs an
//! agent is `strata-agents`; this is what it, the CLI, the servers and the window read and write.

pub use strata_core::agent_runs::{AgentRun, AgentStep, NewStep, RunOutcome, STEP_TEXT_LIMIT, StepKind};
pub use strata_core::agents::{
    Agent, AgentForgotten, AgentSpec, AgentVersion, MAX_DESCRIPTION, MAX_INSTRUCTIONS, SharedAccess, agent_name,
    snake_name,
};

use crate::engine::Engine;
use crate::error::ApiResult;

impl Engine {
    /// The caller's agents, by name.
    pub fn agents(&self) -> ApiResult<Vec<Agent>> {
        Ok(self.store_view().agents(&self.options().user_id)?)
    }

    /// The caller's agent `name`.
    pub fn agent(&self, name: &str) -> ApiResult<Agent> {
        Ok(self.store_view().agent(&self.options().user_id, name)?)
    }

    /// Defines an agent.
    pub fn define_agent(&mut self, name: &str, spec: AgentSpec) -> ApiResult<Agent> {
        let user = self.options().user_id.clone();
        Ok(self.store().define_agent(&user, name, spec)?)
    }

    /// Changes an agent (a new version); with `expected`, only if it is still that version.
    pub fn change_agent(&mut self, name: &str, spec: AgentSpec, expected: Option<u64>) -> ApiResult<Agent> {
        let user = self.options().user_id.clone();
        Ok(self.store().change_agent(&user, name, spec, expected)?)
    }

    /// Every version of an agent, the first first.
    pub fn agent_history(&self, name: &str) -> ApiResult<Vec<AgentVersion>> {
        Ok(self.store_view().agent_history(&self.options().user_id, name)?)
    }

    /// Erases an agent, its versions and the runs it took part in.
    pub fn forget_agent(&mut self, name: &str) -> ApiResult<AgentForgotten> {
        let user = self.options().user_id.clone();
        Ok(self.store().forget_agent(&user, name)?)
    }

    /// Starts the record of a run: its id.
    pub fn start_agent_run(&mut self, agent: &str, task: &str) -> ApiResult<String> {
        let user = self.options().user_id.clone();
        Ok(self.store().start_agent_run(&user, agent, task)?)
    }

    /// Records a run's next step: its number.
    pub fn add_agent_step(&mut self, run: &str, step: &NewStep) -> ApiResult<u64> {
        Ok(self.store().add_agent_step(run, step)?)
    }

    /// Ends a run's record.
    pub fn end_agent_run(&mut self, run: &str, outcome: RunOutcome, answer: &str, last_agent: &str) -> ApiResult<()> {
        Ok(self.store().end_agent_run(run, outcome, answer, last_agent)?)
    }

    /// The caller's runs, the newest first (`agent`: only those given to it).
    pub fn agent_runs(&self, agent: Option<&str>, limit: usize) -> ApiResult<Vec<AgentRun>> {
        Ok(self.store_view().agent_runs(&self.options().user_id, agent, limit)?)
    }

    /// One of the caller's runs with its steps.
    pub fn agent_run(&self, id: &str) -> ApiResult<(AgentRun, Vec<AgentStep>)> {
        Ok(self.store_view().agent_run(&self.options().user_id, id)?)
    }

    /// Erases one of the caller's runs.
    pub fn forget_agent_run(&mut self, id: &str) -> ApiResult<()> {
        let user = self.options().user_id.clone();
        Ok(self.store().forget_agent_run(&user, id)?)
    }
}
