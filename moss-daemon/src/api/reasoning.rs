//! `/reasoning/…` routes: the reasoning memory. Each is `POST /reasoning/<operation>` with the
//! operation's JSON request, the tool name's words after `branchmind_` as the path (`branchmind_init` is
//! `POST /reasoning/init`), a thin adapter over the same domain call as the MCP tool.

use axum::Json;
use axum::extract::State;
use moss_client::reasoning::*;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::json::Body;
use crate::app::AppState;
use crate::error::Result;

/// The `/reasoning` routes, each documented in the OpenAPI document.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(init))
        .routes(routes!(status))
        .routes(routes!(notes_commit))
        .routes(routes!(commit))
        .routes(routes!(show))
        .routes(routes!(log))
        .routes(routes!(export))
        .routes(routes!(diff))
        .routes(routes!(merge))
        .routes(routes!(branch_create))
        .routes(routes!(branch_list))
        .routes(routes!(checkout))
        .routes(routes!(graph_apply))
        .routes(routes!(graph_query))
        .routes(routes!(graph_validate))
        .routes(routes!(graph_diff))
        .routes(routes!(graph_merge))
        .routes(routes!(graph_conflicts))
        .routes(routes!(graph_conflict_show))
        .routes(routes!(graph_conflict_resolve))
        .routes(routes!(think_template))
        .routes(routes!(think_card))
        .routes(routes!(think_context))
        .routes(routes!(think_next))
        .routes(routes!(search))
}

#[utoipa::path(
    post,
    path = "/reasoning/init",
    tag = "reasoning",
    operation_id = "branchmind_init",
    request_body = InitRequest,
    responses((status = 200, description = "branchmind_init", body = InitResponse))
)]
pub async fn init(
    State(s): State<AppState>,
    Body(req): Body<InitRequest>,
) -> Result<Json<InitResponse>> {
    s.reasoning.init(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/status",
    tag = "reasoning",
    operation_id = "branchmind_status",
    request_body = ReasoningStatusRequest,
    responses((status = 200, description = "branchmind_status", body = ReasoningStatus))
)]
pub async fn status(
    State(s): State<AppState>,
    Body(req): Body<ReasoningStatusRequest>,
) -> Result<Json<ReasoningStatus>> {
    s.reasoning.status(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/notes/commit",
    tag = "reasoning",
    operation_id = "branchmind_notes_commit",
    request_body = NotesCommitRequest,
    responses((status = 200, description = "branchmind_notes_commit", body = CommitResponse))
)]
pub async fn notes_commit(
    State(s): State<AppState>,
    Body(req): Body<NotesCommitRequest>,
) -> Result<Json<CommitResponse>> {
    s.reasoning.notes_commit(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/commit",
    tag = "reasoning",
    operation_id = "branchmind_commit",
    request_body = CommitRequest,
    responses((status = 200, description = "branchmind_commit", body = CommitResponse))
)]
pub async fn commit(
    State(s): State<AppState>,
    Body(req): Body<CommitRequest>,
) -> Result<Json<CommitResponse>> {
    s.reasoning.commit(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/show",
    tag = "reasoning",
    operation_id = "branchmind_show",
    request_body = ShowRequest,
    responses((status = 200, description = "branchmind_show", body = ShowResponse))
)]
pub async fn show(
    State(s): State<AppState>,
    Body(req): Body<ShowRequest>,
) -> Result<Json<ShowResponse>> {
    s.reasoning.show(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/log",
    tag = "reasoning",
    operation_id = "branchmind_log",
    request_body = LogRequest,
    responses((status = 200, description = "branchmind_log", body = LogResponse))
)]
pub async fn log(
    State(s): State<AppState>,
    Body(req): Body<LogRequest>,
) -> Result<Json<LogResponse>> {
    s.reasoning.log(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/export",
    tag = "reasoning",
    operation_id = "branchmind_export",
    request_body = ReasoningExportRequest,
    responses((status = 200, description = "branchmind_export", body = ReasoningExport))
)]
pub async fn export(
    State(s): State<AppState>,
    Body(req): Body<ReasoningExportRequest>,
) -> Result<Json<ReasoningExport>> {
    s.reasoning.export(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/diff",
    tag = "reasoning",
    operation_id = "branchmind_diff",
    request_body = DiffRequest,
    responses((status = 200, description = "branchmind_diff", body = DiffResponse))
)]
pub async fn diff(
    State(s): State<AppState>,
    Body(req): Body<DiffRequest>,
) -> Result<Json<DiffResponse>> {
    s.reasoning.diff(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/merge",
    tag = "reasoning",
    operation_id = "branchmind_merge",
    request_body = MergeRequest,
    responses((status = 200, description = "branchmind_merge", body = MergeResponse))
)]
pub async fn merge(
    State(s): State<AppState>,
    Body(req): Body<MergeRequest>,
) -> Result<Json<MergeResponse>> {
    s.reasoning.merge(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/branch/create",
    tag = "reasoning",
    operation_id = "branchmind_branch_create",
    request_body = BranchCreateRequest,
    responses((status = 200, description = "branchmind_branch_create", body = BranchCreateResponse))
)]
pub async fn branch_create(
    State(s): State<AppState>,
    Body(req): Body<BranchCreateRequest>,
) -> Result<Json<BranchCreateResponse>> {
    s.reasoning.branch_create(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/branch/list",
    tag = "reasoning",
    operation_id = "branchmind_branch_list",
    request_body = BranchListRequest,
    responses((status = 200, description = "branchmind_branch_list", body = BranchListResponse))
)]
pub async fn branch_list(
    State(s): State<AppState>,
    Body(req): Body<BranchListRequest>,
) -> Result<Json<BranchListResponse>> {
    s.reasoning.branch_list(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/checkout",
    tag = "reasoning",
    operation_id = "branchmind_checkout",
    request_body = CheckoutRequest,
    responses((status = 200, description = "branchmind_checkout", body = CheckoutResponse))
)]
pub async fn checkout(
    State(s): State<AppState>,
    Body(req): Body<CheckoutRequest>,
) -> Result<Json<CheckoutResponse>> {
    s.reasoning.checkout(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/apply",
    tag = "reasoning",
    operation_id = "branchmind_graph_apply",
    request_body = GraphApplyRequest,
    responses((status = 200, description = "branchmind_graph_apply", body = GraphApplyResponse))
)]
pub async fn graph_apply(
    State(s): State<AppState>,
    Body(req): Body<GraphApplyRequest>,
) -> Result<Json<GraphApplyResponse>> {
    s.reasoning.graph_apply(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/query",
    tag = "reasoning",
    operation_id = "branchmind_graph_query",
    request_body = GraphQueryRequest,
    responses((status = 200, description = "branchmind_graph_query", body = GraphQueryResponse))
)]
pub async fn graph_query(
    State(s): State<AppState>,
    Body(req): Body<GraphQueryRequest>,
) -> Result<Json<GraphQueryResponse>> {
    s.reasoning.graph_query(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/validate",
    tag = "reasoning",
    operation_id = "branchmind_graph_validate",
    request_body = GraphValidateRequest,
    responses((status = 200, description = "branchmind_graph_validate", body = GraphValidateResponse))
)]
pub async fn graph_validate(
    State(s): State<AppState>,
    Body(req): Body<GraphValidateRequest>,
) -> Result<Json<GraphValidateResponse>> {
    s.reasoning.graph_validate(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/diff",
    tag = "reasoning",
    operation_id = "branchmind_graph_diff",
    request_body = GraphDiffRequest,
    responses((status = 200, description = "branchmind_graph_diff", body = GraphDiffResponse))
)]
pub async fn graph_diff(
    State(s): State<AppState>,
    Body(req): Body<GraphDiffRequest>,
) -> Result<Json<GraphDiffResponse>> {
    s.reasoning.graph_diff(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/merge",
    tag = "reasoning",
    operation_id = "branchmind_graph_merge",
    request_body = MergeRequest,
    responses((status = 200, description = "branchmind_graph_merge", body = GraphMergeResponse))
)]
pub async fn graph_merge(
    State(s): State<AppState>,
    Body(req): Body<MergeRequest>,
) -> Result<Json<GraphMergeResponse>> {
    s.reasoning.graph_merge(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/conflicts",
    tag = "reasoning",
    operation_id = "branchmind_graph_conflicts",
    request_body = GraphConflictsRequest,
    responses((status = 200, description = "branchmind_graph_conflicts", body = GraphConflictsResponse))
)]
pub async fn graph_conflicts(
    State(s): State<AppState>,
    Body(req): Body<GraphConflictsRequest>,
) -> Result<Json<GraphConflictsResponse>> {
    s.reasoning.graph_conflicts(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/conflict/show",
    tag = "reasoning",
    operation_id = "branchmind_graph_conflict_show",
    request_body = ConflictShowRequest,
    responses((status = 200, description = "branchmind_graph_conflict_show", body = ConflictShowResponse))
)]
pub async fn graph_conflict_show(
    State(s): State<AppState>,
    Body(req): Body<ConflictShowRequest>,
) -> Result<Json<ConflictShowResponse>> {
    s.reasoning.graph_conflict_show(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/graph/conflict/resolve",
    tag = "reasoning",
    operation_id = "branchmind_graph_conflict_resolve",
    request_body = ConflictResolveRequest,
    responses((status = 200, description = "branchmind_graph_conflict_resolve", body = ConflictResolveResponse))
)]
pub async fn graph_conflict_resolve(
    State(s): State<AppState>,
    Body(req): Body<ConflictResolveRequest>,
) -> Result<Json<ConflictResolveResponse>> {
    s.reasoning.graph_conflict_resolve(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/think/template",
    tag = "reasoning",
    operation_id = "branchmind_think_template",
    request_body = ThinkTemplateRequest,
    responses((status = 200, description = "branchmind_think_template", body = ThinkTemplateResponse))
)]
pub async fn think_template(
    State(s): State<AppState>,
    Body(req): Body<ThinkTemplateRequest>,
) -> Result<Json<ThinkTemplateResponse>> {
    s.reasoning.think_template(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/think/card",
    tag = "reasoning",
    operation_id = "branchmind_think_card",
    request_body = ThinkCardRequest,
    responses((status = 200, description = "branchmind_think_card", body = ThinkCardResponse))
)]
pub async fn think_card(
    State(s): State<AppState>,
    Body(req): Body<ThinkCardRequest>,
) -> Result<Json<ThinkCardResponse>> {
    s.reasoning.think_card(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/think/context",
    tag = "reasoning",
    operation_id = "branchmind_think_context",
    request_body = ThinkContextRequest,
    responses((status = 200, description = "branchmind_think_context", body = ThinkContextResponse))
)]
pub async fn think_context(
    State(s): State<AppState>,
    Body(req): Body<ThinkContextRequest>,
) -> Result<Json<ThinkContextResponse>> {
    s.reasoning.think_context(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/think/next",
    tag = "reasoning",
    operation_id = "branchmind_think_next",
    request_body = ThinkNextRequest,
    responses((status = 200, description = "branchmind_think_next", body = ThinkNextResponse))
)]
pub async fn think_next(
    State(s): State<AppState>,
    Body(req): Body<ThinkNextRequest>,
) -> Result<Json<ThinkNextResponse>> {
    s.reasoning.think_next(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/reasoning/search",
    tag = "reasoning",
    operation_id = "branchmind_search",
    request_body = ReasoningSearchRequest,
    responses((status = 200, description = "branchmind_search", body = ReasoningSearchResponse))
)]
pub async fn search(
    State(s): State<AppState>,
    Body(req): Body<ReasoningSearchRequest>,
) -> Result<Json<ReasoningSearchResponse>> {
    s.reasoning.search(req).await.map(Json)
}
