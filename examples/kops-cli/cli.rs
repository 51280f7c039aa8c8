//! Command-line flags (clap derive) and shell completion.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

/// kops: create, change, plan, apply and delete Kubernetes clusters kept in a kOps state store.
#[derive(Debug, Parser)]
#[command(name = "kops", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Debug, Args, Clone)]
pub struct Global {
    /// State store URL (memfs://, file:///dir, s3://bucket/prefix, gs://bucket/prefix)
    #[arg(long, global = true, env = "KOPS_STATE_STORE", value_name = "URL")]
    pub state: Option<String>,
    /// Use the in-memory mock AWS cloud (its state is kept next to the state store)
    #[arg(long, global = true, env = "KOPS_MOCK_CLOUD", value_parser = clap::builder::FalseyValueParser::new())]
    pub mock_cloud: bool,
    /// Cluster name (for commands that act on one cluster)
    #[arg(long, global = true, env = "KOPS_CLUSTER_NAME", value_name = "NAME")]
    pub name: Option<String>,
    /// Saved versions of each cluster spec to keep (0: keep none)
    #[arg(
        long,
        global = true,
        env = "KOPS_HISTORY_LIMIT",
        value_name = "N",
        default_value_t = kops_statestore::registry::DEFAULT_HISTORY_LIMIT
    )]
    pub history_limit: usize,
    /// Reach the cluster's API through your kubeconfig's context named after the cluster
    /// (its server, proxy and credentials: an SSO plugin, a tunnel) instead of an admin
    /// credential kops mints from the state store
    #[arg(long, global = true, env = "KOPS_USE_KUBECONFIG", value_parser = clap::builder::FalseyValueParser::new())]
    pub use_kubeconfig: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a cluster, resources from a manifest, or an SSH public key
    Create(Box<CreateArgs>),
    /// Replace cluster resources with the ones in a manifest
    Replace(ReplaceArgs),
    /// List clusters, instance groups, instances, keypairs or saved versions
    Get(GetArgs),
    /// Edit a cluster or an instance group in $EDITOR
    Edit(EditArgs),
    /// Plan or apply a cluster's cloud resources, or write them as Terraform
    Update(UpdateArgs),
    /// Delete a cluster and its cloud resources
    Delete(DeleteArgs),
    /// Remove a cluster's lock left by a run that died
    Unlock(crate::unlock::UnlockArgs),
    /// Restore a saved version of a cluster's spec
    Rollback(RollbackArgs),
    /// Upgrade a cluster to the Kubernetes version and images its channel recommends
    Upgrade(crate::upgrade::UpgradeArgs),
    /// Update and roll the control plane, then the nodes, then prune what is no longer
    /// used
    Reconcile(crate::reconcile::ReconcileArgs),
    /// Helpers other programs run (kubectl's credential plugin)
    Helpers(crate::helpers::HelpersArgs),
    /// Tools for inspecting clusters
    Toolbox(ToolboxArgs),
    /// Promote a keypair to primary (keypair rotation)
    Promote(crate::keypair::PromoteArgs),
    /// Distrust keypairs (keypair rotation)
    Distrust(crate::keypair::DistrustArgs),
    /// Trust distrusted keypairs again
    Trust(crate::keypair::TrustArgs),
    /// Export a cluster's kubeconfig (optionally with an admin credential)
    Export(ExportArgs),
    /// Validate a cluster against its instance groups
    Validate(ValidateArgs),
    /// Replace the instances that run an outdated configuration
    #[command(name = "rolling-update")]
    RollingUpdate(RollingUpdateArgs),
    /// Print a shell completion script
    Completion(CompletionArgs),
    /// Print this kops' version and the kOps release of the clusters it builds
    Version(VersionArgs),
    /// Write the command reference (Markdown and man pages) from these definitions
    #[command(name = "gen-cli-docs", hide = true)]
    GenCliDocs(crate::clidocs::GenCliDocsArgs),
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(subcommand)]
    pub command: ExportCommand,
}

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Merge the cluster's context into a kubeconfig file
    Kubeconfig(crate::kubeconfig::ExportKubeconfigArgs),
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(subcommand)]
    pub command: ValidateCommand,
}

#[derive(Debug, Subcommand)]
pub enum ValidateCommand {
    /// Check nodes, instance groups and critical pods (exit 0 valid, 2 not valid, 1 error)
    Cluster(crate::validate::ValidateClusterArgs),
}

#[derive(Debug, Args)]
pub struct RollingUpdateArgs {
    #[command(subcommand)]
    pub command: RollingUpdateCommand,
}

#[derive(Debug, Subcommand)]
pub enum RollingUpdateCommand {
    /// Plan (exit 2 when an update is needed) or perform, with --yes, a rolling update
    Cluster(Box<crate::rolling::RollingUpdateClusterArgs>),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CreateArgs {
    /// Manifest to create resources from (Cluster, InstanceGroup, SSHCredential documents)
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<CreateCommand>,
}

#[derive(Debug, Subcommand)]
pub enum CreateCommand {
    /// Create a cluster specification from flags
    Cluster(Box<CreateClusterArgs>),
    /// Add an instance group to a cluster (opened in $EDITOR first unless --edit=false)
    #[command(alias = "ig", alias = "instancegroups")]
    Instancegroup(CreateIgArgs),
    /// Add an admin SSH public key to a cluster
    Sshpublickey(CreateSshKeyArgs),
    /// Add a new CA keypair to a keyset (keypair rotation)
    Keypair(crate::keypair::CreateKeypairArgs),
    /// Store a secret (encryptionconfig, dockerconfig, ciliumpassword)
    Secret(crate::secret::CreateSecretArgs),
}

/// Cloud providers `create cluster` knows.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CloudArg {
    /// Amazon Web Services
    Aws,
    /// Google Compute Engine
    Gce,
    /// Hetzner Cloud (one location)
    Hetzner,
}

/// Type of the API's load balancer.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LoadBalancerArg {
    /// Reachable from the internet
    Public,
    /// Reachable from inside the network only
    Internal,
}

/// Network topology.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TopologyArg {
    /// Nodes in public subnets
    Public,
    /// Nodes in private subnets behind NAT, with utility subnets for load balancers
    Private,
}

/// Cluster DNS.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DnsArg {
    /// A public DNS zone
    Public,
    /// A private DNS zone
    Private,
    /// No DNS; the API is reached through a load balancer
    None,
}

#[derive(Debug, Args)]
pub struct CreateClusterArgs {
    /// Cluster name (a DNS name, e.g. demo.example.com); also taken from --name
    #[arg(value_name = "NAME")]
    pub cluster_name: Option<String>,
    /// Cloud provider
    #[arg(long, value_enum, default_value = "aws")]
    pub cloud: CloudArg,
    /// GCE project (required with --cloud gce)
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    /// Zones to run nodes in (comma-separated, e.g. us-east-1a,us-east-1b)
    #[arg(long, value_delimiter = ',', required = true)]
    pub zones: Vec<String>,
    /// Zones to run the control plane in (default: the first --control-plane-count zones)
    #[arg(long, value_delimiter = ',')]
    pub control_plane_zones: Vec<String>,
    /// Number of control-plane instances (default: one per control-plane zone, else 1)
    #[arg(long)]
    pub control_plane_count: Option<u32>,
    /// Machine type of control-plane instances
    #[arg(long, value_name = "TYPE")]
    pub control_plane_size: Option<String>,
    /// Number of API-server instances, split between the zones in apiserver-<zone> groups
    /// (kOps' APIServerNodes feature; default: none)
    #[arg(long)]
    pub api_server_count: Option<u32>,
    /// Machine type of API-server instances
    #[arg(long, value_name = "TYPE")]
    pub api_server_size: Option<String>,
    /// Number of worker nodes, split between the zones (default: one per zone)
    #[arg(long)]
    pub node_count: Option<u32>,
    /// Machine type of worker nodes (several, comma-separated: a mixed-instances policy)
    #[arg(long, value_name = "TYPE")]
    pub node_size: Option<String>,
    /// Networking (CNI): cilium, calico, kindnet, flannel, amazonvpc, kubenet, ...
    #[arg(long, default_value = "cilium")]
    pub networking: String,
    /// Network topology (default: private with --ipv6, else public)
    #[arg(long, value_enum)]
    pub topology: Option<TopologyArg>,
    /// DNS zone of the cluster (name or id; default: found from the cluster name)
    #[arg(long, value_name = "ZONE")]
    pub dns_zone: Option<String>,
    /// DNS type (default: public with --dns-zone, else none)
    #[arg(long, value_enum)]
    pub dns: Option<DnsArg>,
    /// File holding the admin SSH public key to add
    #[arg(long, value_name = "FILE")]
    pub ssh_public_key: Option<PathBuf>,
    /// Machine image of every instance group (default: from the channel)
    #[arg(long)]
    pub image: Option<String>,
    /// Kubernetes version (default: the channel's recommended version)
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,
    /// Network CIDR of the cluster's VPC (default: 172.20.0.0/16, or the shared VPC's);
    /// more, comma-separated, are added to the VPC, each with a subnet
    #[arg(long, value_delimiter = ',', value_name = "CIDR")]
    pub network_cidr: Vec<String>,
    /// An existing VPC (GCE: network) to build the cluster in
    #[arg(long, value_name = "ID")]
    pub network_id: Option<String>,
    /// Existing subnets to use, comma-separated (AWS: one per zone; GCE: one)
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub subnets: Vec<String>,
    /// Existing utility subnets to use, comma-separated (private topology)
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub utility_subnets: Vec<String>,
    /// Egress of the new subnets: a NAT gateway (`nat-...`), an instance (`i-...`) or
    /// `External` (kOps' `NewClusterOptions.Egress`, which its command has no flag for)
    #[arg(long, value_name = "EGRESS")]
    pub egress: Option<String>,
    /// An IPv6 cluster (AWS)
    #[arg(long)]
    pub ipv6: bool,
    /// Leave the subnets untagged
    #[arg(long)]
    pub disable_subnet_tags: bool,
    /// Image of the worker nodes
    #[arg(long, value_name = "IMAGE")]
    pub node_image: Option<String>,
    /// Image of the control plane
    #[arg(long, visible_alias = "master-image", value_name = "IMAGE")]
    pub control_plane_image: Option<String>,
    /// Image of the bastions
    #[arg(long, value_name = "IMAGE")]
    pub bastion_image: Option<String>,
    /// More security groups of the worker nodes, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub node_security_groups: Vec<String>,
    /// More security groups of the control plane, comma-separated
    #[arg(
        long,
        visible_alias = "master-security-groups",
        value_delimiter = ',',
        value_name = "ID"
    )]
    pub control_plane_security_groups: Vec<String>,
    /// Give every machine a public IP (or none, with false)
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub associate_public_ip: Option<bool>,
    /// ARN of the certificate of the API's load balancer (AWS)
    #[arg(long, value_name = "ARN")]
    pub api_ssl_certificate: Option<String>,
    /// The API's public name
    #[arg(long, visible_alias = "master-public-name", value_name = "NAME")]
    pub api_public_name: Option<String>,
    /// Authorization mode: RBAC or AlwaysAllow
    #[arg(long, default_value = "RBAC", value_name = "MODE")]
    pub authorization: String,
    /// Kubernetes feature gates of every component, comma-separated: Name or +Name turns
    /// one on, -Name off
    #[arg(long, value_delimiter = ',', value_name = "GATES")]
    pub kubernetes_feature_gates: Vec<String>,
    /// Where to publish the service-account issuer's discovery documents
    /// (s3://bucket/path); on AWS it also gives pods IAM roles
    #[arg(long, value_name = "URL")]
    pub discovery_store: Option<String>,
    /// What manages the nodes: cloudgroups or karpenter
    #[arg(long, default_value = "cloudgroups", value_name = "MANAGER")]
    pub instance_manager: String,
    /// The etcd clusters, comma-separated
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "main,events",
        value_name = "NAMES"
    )]
    pub etcd_clusters: Vec<String>,
    /// etcd's volume type (gp3, io1, ...)
    #[arg(long, value_name = "TYPE")]
    pub etcd_storage_type: Option<String>,
    /// Root volume type of the worker nodes (gp3, io1, ...)
    #[arg(long, value_name = "TYPE")]
    pub node_volume_type: Option<String>,
    /// Root volume type of the control plane
    #[arg(long, visible_alias = "master-volume-type", value_name = "TYPE")]
    pub control_plane_volume_type: Option<String>,
    /// Tenancy of the worker nodes (AWS): default or dedicated
    #[arg(long, value_name = "TENANCY")]
    pub node_tenancy: Option<String>,
    /// Tenancy of the control plane (AWS)
    #[arg(long, visible_alias = "master-tenancy", value_name = "TENANCY")]
    pub control_plane_tenancy: Option<String>,
    /// Service account of the machines (GCE)
    #[arg(long, value_name = "EMAIL")]
    pub gce_service_account: Option<String>,
    /// Add a bastion group, the only way in by SSH (private topology only)
    #[arg(long)]
    pub bastion: bool,
    /// Put the API behind a load balancer of this type (default: one for a private
    /// topology or DNS none, public)
    #[arg(long = "api-loadbalancer-type", value_enum, value_name = "TYPE")]
    pub api_load_balancer_type: Option<LoadBalancerArg>,
    /// CIDRs that may reach the API, comma-separated (default: anywhere)
    #[arg(long, value_delimiter = ',', value_name = "CIDR")]
    pub admin_access: Vec<String>,
    /// CIDRs that may reach the machines by SSH, comma-separated (default: as
    /// --admin-access)
    #[arg(long, value_delimiter = ',', value_name = "CIDR")]
    pub ssh_access: Vec<String>,
    /// Labels (tags) of every cloud object, e.g. team=platform,env=prod
    #[arg(long, value_delimiter = ',', value_name = "KEY=VALUE")]
    pub cloud_labels: Vec<String>,
    /// Channel of recommended versions and images (default: stable)
    #[arg(long, value_name = "CHANNEL")]
    pub channel: Option<String>,
    /// Root volume size of the nodes, GB
    #[arg(long, value_name = "GB")]
    pub node_volume_size: Option<u32>,
    /// Root volume size of the control plane's machines, GB
    #[arg(long, visible_alias = "master-volume-size", value_name = "GB")]
    pub control_plane_volume_size: Option<u32>,
    /// Encrypt etcd's volumes (default: true on AWS)
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub encrypt_etcd_storage: Option<bool>,
    /// Create the cloud resources too (update cluster --yes), or with --target terraform
    /// write them to --out
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// With --yes: where the changes go
    #[arg(long, value_enum, default_value = "direct")]
    pub target: Target,
    /// With --yes --target terraform: the output directory
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the manifest instead of storing it
    #[arg(long)]
    pub dry_run: bool,
    /// Format of the --dry-run manifest
    #[arg(short, long, value_enum, default_value = "yaml")]
    pub output: ManifestFormat,
    #[command(flatten)]
    pub fields: FieldArgs,
}

#[derive(Debug, Args)]
pub struct CreateIgArgs {
    /// Instance group name
    pub group: String,
    /// Role of its machines: node, control-plane, bastion or apiserver
    #[arg(long, default_value = "node")]
    pub role: String,
    /// Subnets to run in, comma-separated (default: every subnet that is neither a
    /// utility nor a dual-stack one; a control-plane group must name them)
    #[arg(long = "subnet", value_delimiter = ',')]
    pub subnets: Vec<String>,
    /// Zones to run in, comma-separated (required on GCE)
    #[arg(long = "zone", value_delimiter = ',')]
    pub zones: Vec<String>,
    /// Print the instance group instead of storing it
    #[arg(long)]
    pub dry_run: bool,
    /// Format of the --dry-run output
    #[arg(short, long, value_enum, default_value = "yaml")]
    pub output: ManifestFormat,
    /// Open the new group in $EDITOR before storing it; --edit=false stores it as is
    #[arg(
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub edit: bool,
}

#[derive(Debug, Args)]
pub struct CreateSshKeyArgs {
    /// File holding the SSH public key
    #[arg(
        short = 'i',
        long = "ssh-public-key",
        value_name = "FILE",
        required = true
    )]
    pub ssh_public_key: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReplaceArgs {
    /// Manifest with the new versions of the resources
    #[arg(short = 'f', long = "filename", value_name = "FILE", required = true)]
    pub filename: PathBuf,
    /// Create the resources that do not exist yet
    #[arg(long)]
    pub force: bool,
}

/// Output format of `get`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum GetFormat {
    /// A table
    #[default]
    Table,
    /// kOps v1alpha2 YAML
    Yaml,
    /// kOps v1alpha2 JSON
    Json,
}

/// A manifest format.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ManifestFormat {
    /// YAML
    Yaml,
    /// JSON
    Json,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(subcommand)]
    pub command: GetCommand,
}

#[derive(Debug, Subcommand)]
pub enum GetCommand {
    /// List clusters (all, or the named ones)
    #[command(alias = "cluster")]
    Clusters(GetClustersArgs),
    /// List a cluster's instance groups
    #[command(alias = "instancegroup", alias = "ig")]
    Instancegroups(GetIgArgs),
    /// List a cluster's keypairs
    #[command(alias = "keypair")]
    Keypairs(crate::keypair::GetKeypairsArgs),
    /// List the saved versions of a cluster's spec
    History(crate::history::GetHistoryArgs),
    /// List a cluster's machines, whether each needs an update, and their nodes
    #[command(alias = "instance")]
    Instances(crate::instances::GetInstancesArgs),
    /// Show a cluster, its instance groups and its additional objects
    All(GetAllArgs),
    /// List the names of a cluster's secrets
    #[command(alias = "secret")]
    Secrets(crate::secret::GetSecretsArgs),
    /// List the admin SSH public keys of a cluster
    #[command(alias = "sshpublickey")]
    Sshpublickeys(crate::secret::GetSshKeysArgs),
    /// List the container images and files a cluster's machines download, and where from
    Assets(GetAssetsArgs),
}

#[derive(Debug, Args)]
pub struct GetAssetsArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: GetFormat,
    /// Copy each asset from its canonical location to its download location (files to
    /// spec.assets.fileRepository, images to spec.assets.containerRegistry); prints each
    /// asset's outcome and fails when one could not be copied
    #[arg(long)]
    pub copy: bool,
    /// With --copy: reach REGISTRY at URL instead (a pull-through mirror, a registry on
    /// plain HTTP), as REGISTRY=URL; repeatable
    #[arg(
        long = "registry-endpoint",
        value_name = "REGISTRY=URL",
        requires = "copy"
    )]
    pub registry_endpoints: Vec<String>,
    /// With --copy: read the files whose canonical URL starts with PREFIX from
    /// REPLACEMENT instead (an internal mirror of https://dl.k8s.io/), as
    /// PREFIX=REPLACEMENT; repeatable
    #[arg(
        long = "file-source",
        value_name = "PREFIX=REPLACEMENT",
        requires = "copy"
    )]
    pub file_sources: Vec<String>,
    /// With --copy: the Docker client configuration holding registry logins (default:
    /// $DOCKER_CONFIG/config.json, else ~/.docker/config.json, when present)
    #[arg(long, value_name = "PATH", requires = "copy")]
    pub docker_config: Option<std::path::PathBuf>,
    /// With --copy: assets copied at once
    #[arg(long, default_value_t = 4, requires = "copy")]
    pub copy_concurrency: usize,
}

#[derive(Debug, Args)]
pub struct RollbackArgs {
    #[command(subcommand)]
    pub command: RollbackCommand,
}

#[derive(Debug, Subcommand)]
pub enum RollbackCommand {
    /// Make a saved version of the cluster spec current again (see `get history`)
    Cluster(crate::history::RollbackClusterArgs),
}

#[derive(Debug, Args)]
pub struct GetClustersArgs {
    /// Clusters to show (default: all)
    pub names: Vec<String>,
    /// Show the completed spec, every default filled in (with -o yaml or json), as the
    /// model builds from it
    #[arg(long)]
    pub full: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: GetFormat,
}

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Print only the version number
    #[arg(long)]
    pub short: bool,
}

#[derive(Debug, Args)]
pub struct GetAllArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Output format (YAML and JSON give a manifest `create -f` reads back)
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: GetFormat,
}

#[derive(Debug, Args)]
pub struct GetIgArgs {
    /// Instance groups to show (default: all)
    pub names: Vec<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: GetFormat,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    #[command(subcommand)]
    pub command: EditCommand,
}

#[derive(Debug, Subcommand)]
pub enum EditCommand {
    /// Edit the cluster specification
    Cluster(EditClusterArgs),
    /// Edit an instance group
    #[command(alias = "ig")]
    Instancegroup(EditIgArgs),
}

#[derive(Debug, Args)]
pub struct EditClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    #[command(flatten)]
    pub fields: FieldArgs,
}

#[derive(Debug, Args)]
pub struct EditIgArgs {
    /// Instance group name
    pub group: String,
    #[command(flatten)]
    pub fields: FieldArgs,
}

/// `--set` / `--unset`: change fields of the spec (in `edit`, without an editor).
#[derive(Debug, Args, Default, Clone)]
pub struct FieldArgs {
    /// Set a field of the spec: PATH=VALUE (spec.kubernetesVersion=1.34.1; a list gets the
    /// comma-separated items, a map the KEY=VALUE entry); repeatable
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Unset a field of the spec (spec.kubelet.maxPods); repeatable
    #[arg(long = "unset", value_name = "PATH")]
    pub unsets: Vec<String>,
}

impl FieldArgs {
    /// Whether any field is set or unset.
    pub fn any(&self) -> bool {
        !self.sets.is_empty() || !self.unsets.is_empty()
    }
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    #[command(subcommand)]
    pub command: UpdateCommand,
}

#[derive(Debug, Subcommand)]
pub enum UpdateCommand {
    /// Show the changes a cluster needs; apply them with --yes
    Cluster(UpdateClusterArgs),
}

/// Where `update cluster` sends the changes.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum Target {
    /// Call the cloud's APIs
    #[default]
    Direct,
    /// Write a Terraform configuration to --out
    Terraform,
}

/// Output format of a plan.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum PlanFormat {
    /// Human-readable text (coloured on a terminal)
    #[default]
    Text,
    /// JSON
    Json,
}

/// Where `update cluster --target terraform` keeps Terraform's state.
#[derive(Debug, Args, Default)]
pub struct TerraformBackendArgs {
    /// With --target terraform: keep Terraform's state in this bucket
    /// (s3://BUCKET/KEY or gs://BUCKET/PREFIX), written to backend.tf in the output
    /// directory, which later updates keep. Turn on the bucket's versioning: an
    /// overwritten or deleted state can then be restored from an earlier version
    #[arg(long, value_name = "URL")]
    pub terraform_backend: Option<String>,
    /// The S3 backend bucket's region (default: the cluster's)
    #[arg(long, value_name = "REGION", requires = "terraform_backend")]
    pub terraform_backend_region: Option<String>,
    /// How the S3 backend locks the state: lockfile (Terraform 1.10+, the default),
    /// dynamodb:TABLE or none
    #[arg(long, value_name = "LOCK", requires = "terraform_backend")]
    pub terraform_backend_lock: Option<String>,
    /// An S3-compatible endpoint for the backend (MinIO, an emulator), addressed in path
    /// style
    #[arg(long, value_name = "URL", requires = "terraform_backend")]
    pub terraform_backend_endpoint: Option<String>,
}

#[derive(Debug, Args)]
pub struct UpdateClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Apply the changes (default: dry run, exit 2 when changes are pending)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Target of the changes
    #[arg(long, value_enum, default_value = "direct")]
    pub target: Target,
    /// Output directory for --target terraform
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Terraform's remote state
    #[command(flatten)]
    pub backend: TerraformBackendArgs,
    /// Plan output format
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: PlanFormat,
    /// Lifecycle overrides, e.g. IAMRole=ExistsAndWarnIfChanges (comma-separated)
    #[arg(long, value_delimiter = ',', value_name = "KIND=LIFECYCLE")]
    pub lifecycle_overrides: Vec<String>,
    /// Also perform deferred deletions: security-group rules, load balancers, target
    /// groups and volumes the spec no longer needs
    #[arg(long)]
    pub prune: bool,
    /// Dry run: read every autoscaling group's lifecycle hooks from the cloud instead of
    /// trusting kops' record of the last apply (kept an hour) for the groups not recreated
    /// since. An apply always reads them
    #[arg(long)]
    pub refresh: bool,
    /// Only these instance groups' machines (launch templates, autoscaling groups, nodeup
    /// configs); the others' are left as they are. Everything shared is updated
    #[arg(
        long = "instance-group",
        visible_alias = "instance-groups",
        value_delimiter = ',',
        value_name = "NAME"
    )]
    pub instance_groups: Vec<String>,
    /// Only the machines of groups with these roles (ControlPlane, APIServer, Node,
    /// Bastion), as --instance-group
    #[arg(
        long = "instance-group-roles",
        value_delimiter = ',',
        value_name = "ROLE"
    )]
    pub roles: Vec<String>,
    /// After applying, merge the cluster's context into the kubeconfig file and make it
    /// current (default: on, except on the mock cloud, whose API does not exist, unless
    /// --admin or --user asks for it)
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub create_kube_config: Option<bool>,
    /// Give every group the spec's Kubernetes version even while the control plane runs
    /// an older one (default: the other groups keep the control plane's, as its API
    /// reports it, so no kubelet is newer than the API server)
    #[arg(long)]
    pub ignore_kubelet_version_skew: bool,
    /// Only this part of the model: network, security or cluster (the earlier parts must
    /// exist, the later ones are left alone)
    #[arg(long, value_name = "PHASE")]
    pub phase: Option<String>,
    /// Hetzner: write the cluster's files byte for byte as kOps does. With --target
    /// terraform the API token goes into the data files (terraform plan prints it) instead
    /// of coming from the sensitive variable hcloud_token, and the cluster autoscaler gets
    /// kOps' empty SSH key (its servers come up without it) instead of the key's name.
    /// Other clouds' files are kOps' already
    #[arg(long)]
    pub kops_identical_files: bool,
    /// Part of `reconcile cluster`, which rolls the machines itself: no hint to.
    #[arg(skip)]
    pub reconciling: bool,
    #[command(flatten)]
    pub kubeconfig: crate::kubeconfig::KubeconfigFlags,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Manifest whose clusters, instance groups and SSH credentials to delete
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filename: Option<PathBuf>,
    /// With -f: delete (default: say what would be deleted)
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(subcommand)]
    pub command: Option<DeleteCommand>,
}

#[derive(Debug, Subcommand)]
pub enum DeleteCommand {
    /// Delete a cluster's cloud resources and its state (dry run without --yes)
    Cluster(DeleteClusterArgs),
    /// Remove an instance group from the spec (dry run without --yes); the next
    /// `update cluster --yes` deletes its autoscaling group and launch template
    #[command(alias = "ig")]
    Instancegroup(DeleteIgArgs),
    /// Delete one instance: detach it so its group launches a replacement, validate, drain
    /// it and terminate it (dry run without --yes)
    Instance(crate::rolling::DeleteInstanceArgs),
    /// Delete secrets of a cluster by name
    #[command(alias = "secrets")]
    Secret(crate::secret::DeleteSecretArgs),
    /// Delete the admin SSH public keys of a cluster
    #[command(alias = "sshpublickeys")]
    Sshpublickey,
}

#[derive(Debug, Args)]
pub struct DeleteIgArgs {
    /// Instance group name
    pub group: String,
    /// Remove it (default: say what would be removed)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct DeleteClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Delete (default: list what would be deleted)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct ToolboxArgs {
    #[command(subcommand)]
    pub command: ToolboxCommand,
}

#[derive(Debug, Subcommand)]
pub enum ToolboxCommand {
    /// Print a cluster's spec, instance groups and cloud resources
    Dump(DumpArgs),
    /// Render templates (Go text/template with Sprig's functions) with values files
    Template(crate::template::TemplateArgs),
    /// Check the state store's bucket: versioning, encryption, public access (exit 1 when
    /// a check fails; --fix turns them on)
    CheckStateStore(CheckStateStoreArgs),
    /// Put a cluster's state back as it was at a time, from the bucket's object versions
    /// (dry run unless --yes; --list shows the times there are)
    RestoreState(RestoreStateArgs),
    /// etcd-manager's backups in the state store: list them, request a restore
    Etcd(EtcdArgs),
    /// Rebuild a cluster's spec from the cloud objects it owns, into --state
    Recover(RecoverArgs),
    /// Print the least-privilege AWS IAM policy an operator needs to run commands (for any
    /// cluster, or scoped to --name; the s3:// --state is scoped too)
    IamPolicy(IamPolicyArgs),
}

/// Output of `toolbox iam-policy`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum PolicyFormat {
    /// The IAM policy document (JSON)
    #[default]
    Json,
    /// An aws_iam_policy Terraform resource
    Terraform,
    /// Every AWS operation the commands send, with the actions it needs
    Table,
}

#[derive(Debug, Args)]
pub struct IamPolicyArgs {
    /// The commands to allow: create, update, delete, rolling-update, validate
    /// (comma-separated; default: all)
    #[arg(long = "for", value_delimiter = ',', value_name = "COMMANDS")]
    pub commands: Vec<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: PolicyFormat,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    #[command(subcommand)]
    pub command: RecoverCommand,
}

#[derive(Debug, Subcommand)]
pub enum RecoverCommand {
    /// Rebuild the Cluster and InstanceGroup specs (AWS) and store them in --state
    Cluster(RecoverClusterArgs),
}

#[derive(Debug, Args)]
pub struct RecoverClusterArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// The region the cluster runs in
    #[arg(long)]
    pub region: String,
    /// Print what would be stored, store nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct EtcdArgs {
    #[command(subcommand)]
    pub command: EtcdCommand,
}

#[derive(Debug, Subcommand)]
pub enum EtcdCommand {
    /// List the backups etcd-manager wrote (each etcd cluster, oldest first)
    ListBackups(EtcdListArgs),
    /// Ask etcd-manager to restore a backup, as etcd-manager-ctl restore-backup does
    /// (dry run unless --yes)
    RestoreBackup(EtcdRestoreArgs),
}

#[derive(Debug, Args)]
pub struct EtcdListArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Only this etcd cluster (main, events)
    #[arg(long)]
    pub etcd: Option<String>,
}

#[derive(Debug, Args)]
pub struct EtcdRestoreArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// The etcd cluster (main, events)
    #[arg(long)]
    pub etcd: String,
    /// The backup's name, as list-backups shows it
    #[arg(value_name = "BACKUP", long)]
    pub backup: String,
    /// Write the request (default: show it)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct RestoreStateArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// The time to restore to, RFC 3339 (2026-12-07T10:00:00Z)
    #[arg(long, value_name = "TIME", required_unless_present = "list")]
    pub to: Option<String>,
    /// List the times the object versions allow, newest first, and what changed then
    #[arg(long, conflicts_with = "to")]
    pub list: bool,
    /// Restore (default: show what would change)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct CheckStateStoreArgs {
    /// Turn on every setting found off, and say what changed
    #[arg(long)]
    pub fix: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value_t)]
    pub output: CheckFormat,
}

/// Output of `toolbox check-state-store`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum CheckFormat {
    /// A table
    #[default]
    Table,
    /// JSON
    Json,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Cluster name (also taken from --name)
    #[arg(value_name = "CLUSTER")]
    pub cluster_name: Option<String>,
    /// Output format
    #[arg(short, long, value_enum, default_value = "yaml")]
    pub output: ManifestFormat,
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// Shell to print the completion script for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script for `shell` to stdout.
pub fn completion(shell: clap_complete::Shell) {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "kops", &mut std::io::stdout());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_consistent() {
        Cli::command().debug_assert();
    }
}
