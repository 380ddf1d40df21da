//! reasoning operations (`POST /reasoning/…`), one method per operation.

use super::{Client, ClientError};
use crate::reasoning::{
    BranchCreateRequest, BranchCreateResponse, BranchListRequest, BranchListResponse,
    CheckoutRequest, CheckoutResponse, CommitRequest, CommitResponse, ConflictResolveRequest,
    ConflictResolveResponse, ConflictShowRequest, ConflictShowResponse, DiffRequest, DiffResponse,
    GraphApplyRequest, GraphApplyResponse, GraphConflictsRequest, GraphConflictsResponse,
    GraphDiffRequest, GraphDiffResponse, GraphMergeResponse, GraphQueryRequest, GraphQueryResponse,
    GraphValidateRequest, GraphValidateResponse, InitRequest, InitResponse, LogRequest,
    LogResponse, MergeRequest, MergeResponse, NotesCommitRequest, ReasoningExport,
    ReasoningExportRequest, ReasoningSearchRequest, ReasoningSearchResponse, ReasoningStatus,
    ReasoningStatusRequest, ShowRequest, ShowResponse, ThinkCardRequest, ThinkCardResponse,
    ThinkContextRequest, ThinkContextResponse, ThinkNextRequest, ThinkNextResponse,
    ThinkTemplateRequest, ThinkTemplateResponse,
};

/// The reasoning operations of a [`Client`] ([`Client::reasoning`]). Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Reasoning<'a> {
    pub(super) client: &'a Client,
}

impl Reasoning<'_> {
    /// `branchmind_init`: `POST /reasoning/init`.
    pub async fn init(&self, req: &InitRequest) -> Result<InitResponse, ClientError> {
        self.client.post("/reasoning/init", req).await
    }

    /// `branchmind_status`: `POST /reasoning/status`.
    pub async fn status(
        &self,
        req: &ReasoningStatusRequest,
    ) -> Result<ReasoningStatus, ClientError> {
        self.client.post("/reasoning/status", req).await
    }

    /// `branchmind_notes_commit`: `POST /reasoning/notes/commit`.
    pub async fn notes_commit(
        &self,
        req: &NotesCommitRequest,
    ) -> Result<CommitResponse, ClientError> {
        self.client.post("/reasoning/notes/commit", req).await
    }

    /// `branchmind_commit`: `POST /reasoning/commit`.
    pub async fn commit(&self, req: &CommitRequest) -> Result<CommitResponse, ClientError> {
        self.client.post("/reasoning/commit", req).await
    }

    /// `branchmind_show`: `POST /reasoning/show`.
    pub async fn show(&self, req: &ShowRequest) -> Result<ShowResponse, ClientError> {
        self.client.post("/reasoning/show", req).await
    }

    /// `branchmind_log`: `POST /reasoning/log`.
    pub async fn log(&self, req: &LogRequest) -> Result<LogResponse, ClientError> {
        self.client.post("/reasoning/log", req).await
    }

    /// `branchmind_export`: `POST /reasoning/export`.
    pub async fn export(
        &self,
        req: &ReasoningExportRequest,
    ) -> Result<ReasoningExport, ClientError> {
        self.client.post("/reasoning/export", req).await
    }

    /// `branchmind_diff`: `POST /reasoning/diff`.
    pub async fn diff(&self, req: &DiffRequest) -> Result<DiffResponse, ClientError> {
        self.client.post("/reasoning/diff", req).await
    }

    /// `branchmind_merge`: `POST /reasoning/merge`.
    pub async fn merge(&self, req: &MergeRequest) -> Result<MergeResponse, ClientError> {
        self.client.post("/reasoning/merge", req).await
    }

    /// `branchmind_branch_create`: `POST /reasoning/branch/create`.
    pub async fn branch_create(
        &self,
        req: &BranchCreateRequest,
    ) -> Result<BranchCreateResponse, ClientError> {
        self.client.post("/reasoning/branch/create", req).await
    }

    /// `branchmind_branch_list`: `POST /reasoning/branch/list`.
    pub async fn branch_list(
        &self,
        req: &BranchListRequest,
    ) -> Result<BranchListResponse, ClientError> {
        self.client.post("/reasoning/branch/list", req).await
    }

    /// `branchmind_checkout`: `POST /reasoning/checkout`.
    pub async fn checkout(&self, req: &CheckoutRequest) -> Result<CheckoutResponse, ClientError> {
        self.client.post("/reasoning/checkout", req).await
    }

    /// `branchmind_graph_apply`: `POST /reasoning/graph/apply`.
    pub async fn graph_apply(
        &self,
        req: &GraphApplyRequest,
    ) -> Result<GraphApplyResponse, ClientError> {
        self.client.post("/reasoning/graph/apply", req).await
    }

    /// `branchmind_graph_query`: `POST /reasoning/graph/query`.
    pub async fn graph_query(
        &self,
        req: &GraphQueryRequest,
    ) -> Result<GraphQueryResponse, ClientError> {
        self.client.post("/reasoning/graph/query", req).await
    }

    /// `branchmind_graph_validate`: `POST /reasoning/graph/validate`.
    pub async fn graph_validate(
        &self,
        req: &GraphValidateRequest,
    ) -> Result<GraphValidateResponse, ClientError> {
        self.client.post("/reasoning/graph/validate", req).await
    }

    /// `branchmind_graph_diff`: `POST /reasoning/graph/diff`.
    pub async fn graph_diff(
        &self,
        req: &GraphDiffRequest,
    ) -> Result<GraphDiffResponse, ClientError> {
        self.client.post("/reasoning/graph/diff", req).await
    }

    /// `branchmind_graph_merge`: `POST /reasoning/graph/merge`.
    pub async fn graph_merge(&self, req: &MergeRequest) -> Result<GraphMergeResponse, ClientError> {
        self.client.post("/reasoning/graph/merge", req).await
    }

    /// `branchmind_graph_conflicts`: `POST /reasoning/graph/conflicts`.
    pub async fn graph_conflicts(
        &self,
        req: &GraphConflictsRequest,
    ) -> Result<GraphConflictsResponse, ClientError> {
        self.client.post("/reasoning/graph/conflicts", req).await
    }

    /// `branchmind_graph_conflict_show`: `POST /reasoning/graph/conflict/show`.
    pub async fn graph_conflict_show(
        &self,
        req: &ConflictShowRequest,
    ) -> Result<ConflictShowResponse, ClientError> {
        self.client
            .post("/reasoning/graph/conflict/show", req)
            .await
    }

    /// `branchmind_graph_conflict_resolve`: `POST /reasoning/graph/conflict/resolve`.
    pub async fn graph_conflict_resolve(
        &self,
        req: &ConflictResolveRequest,
    ) -> Result<ConflictResolveResponse, ClientError> {
        self.client
            .post("/reasoning/graph/conflict/resolve", req)
            .await
    }

    /// `branchmind_think_template`: `POST /reasoning/think/template`.
    pub async fn think_template(
        &self,
        req: &ThinkTemplateRequest,
    ) -> Result<ThinkTemplateResponse, ClientError> {
        self.client.post("/reasoning/think/template", req).await
    }

    /// `branchmind_think_card`: `POST /reasoning/think/card`.
    pub async fn think_card(
        &self,
        req: &ThinkCardRequest,
    ) -> Result<ThinkCardResponse, ClientError> {
        self.client.post("/reasoning/think/card", req).await
    }

    /// `branchmind_think_context`: `POST /reasoning/think/context`.
    pub async fn think_context(
        &self,
        req: &ThinkContextRequest,
    ) -> Result<ThinkContextResponse, ClientError> {
        self.client.post("/reasoning/think/context", req).await
    }

    /// `branchmind_think_next`: `POST /reasoning/think/next`.
    pub async fn think_next(
        &self,
        req: &ThinkNextRequest,
    ) -> Result<ThinkNextResponse, ClientError> {
        self.client.post("/reasoning/think/next", req).await
    }

    /// `branchmind_search`: `POST /reasoning/search`.
    pub async fn search(
        &self,
        req: &ReasoningSearchRequest,
    ) -> Result<ReasoningSearchResponse, ClientError> {
        self.client.post("/reasoning/search", req).await
    }
}
