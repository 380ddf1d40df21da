//! plans and tasks operations (`POST /tasks/…`), one method per operation.

use super::{Client, ClientError};
use crate::tasks::{
    TaskMutation, TasksContextRequest, TasksContextResponse, TasksCreateRequest,
    TasksDecomposeRequest, TasksDefineRequest, TasksDeltaRequest, TasksDeltaResponse,
    TasksDoneRequest, TasksEditRequest, TasksFocusRequest, TasksFocusResponse,
    TasksFocusSetRequest, TasksNoteRequest, TasksRadarRequest, TasksRadarResponse,
    TasksVerifyRequest,
};

/// The plans and tasks operations of a [`Client`] ([`Client::tasks`]). Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Tasks<'a> {
    pub(super) client: &'a Client,
}

impl Tasks<'_> {
    /// `tasks_create`: `POST /tasks/create`.
    pub async fn create(&self, req: &TasksCreateRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/create", req).await
    }

    /// `tasks_decompose`: `POST /tasks/decompose`.
    pub async fn decompose(
        &self,
        req: &TasksDecomposeRequest,
    ) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/decompose", req).await
    }

    /// `tasks_define`: `POST /tasks/define`.
    pub async fn define(&self, req: &TasksDefineRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/define", req).await
    }

    /// `tasks_note`: `POST /tasks/note`.
    pub async fn note(&self, req: &TasksNoteRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/note", req).await
    }

    /// `tasks_verify`: `POST /tasks/verify`.
    pub async fn verify(&self, req: &TasksVerifyRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/verify", req).await
    }

    /// `tasks_done`: `POST /tasks/done`.
    pub async fn done(&self, req: &TasksDoneRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/done", req).await
    }

    /// `tasks_edit`: `POST /tasks/edit`.
    pub async fn edit(&self, req: &TasksEditRequest) -> Result<TaskMutation, ClientError> {
        self.client.post("/tasks/edit", req).await
    }

    /// `tasks_context`: `POST /tasks/context`.
    pub async fn context(
        &self,
        req: &TasksContextRequest,
    ) -> Result<TasksContextResponse, ClientError> {
        self.client.post("/tasks/context", req).await
    }

    /// `tasks_delta`: `POST /tasks/delta`.
    pub async fn delta(&self, req: &TasksDeltaRequest) -> Result<TasksDeltaResponse, ClientError> {
        self.client.post("/tasks/delta", req).await
    }

    /// `tasks_focus_get`: `POST /tasks/focus/get`.
    pub async fn focus_get(
        &self,
        req: &TasksFocusRequest,
    ) -> Result<TasksFocusResponse, ClientError> {
        self.client.post("/tasks/focus/get", req).await
    }

    /// `tasks_focus_set`: `POST /tasks/focus/set`.
    pub async fn focus_set(
        &self,
        req: &TasksFocusSetRequest,
    ) -> Result<TasksFocusResponse, ClientError> {
        self.client.post("/tasks/focus/set", req).await
    }

    /// `tasks_focus_clear`: `POST /tasks/focus/clear`.
    pub async fn focus_clear(
        &self,
        req: &TasksFocusRequest,
    ) -> Result<TasksFocusResponse, ClientError> {
        self.client.post("/tasks/focus/clear", req).await
    }

    /// `tasks_radar`: `POST /tasks/radar`.
    pub async fn radar(&self, req: &TasksRadarRequest) -> Result<TasksRadarResponse, ClientError> {
        self.client.post("/tasks/radar", req).await
    }
}
