locals {
  cluster_name                 = "golden-shared.example.org"
  master_autoscaling_group_ids = [aws_autoscaling_group.cp-masters-golden-shared-example-org.id]
  master_security_group_ids    = [aws_security_group.masters-golden-shared-example-org.id]
  masters_role_arn             = aws_iam_role.masters-golden-shared-example-org.arn
  masters_role_name            = aws_iam_role.masters-golden-shared-example-org.name
  node_autoscaling_group_ids   = [aws_autoscaling_group.nodes-golden-shared-example-org.id]
  node_security_group_ids      = [aws_security_group.nodes-golden-shared-example-org.id]
  node_subnet_ids              = ["subnet-0abc"]
  nodes_role_arn               = aws_iam_role.nodes-golden-shared-example-org.arn
  nodes_role_name              = aws_iam_role.nodes-golden-shared-example-org.name
  region                       = "eu-west-9"
  subnet_eu-west-9a_id         = "subnet-0abc"
  subnet_ids                   = ["subnet-0abc"]
  vpc_cidr_block               = data.aws_vpc.golden-shared-example-org.cidr_block
  vpc_id                       = "vpc-0feedface"
  vpc_ipv6_cidr_block          = data.aws_vpc.golden-shared-example-org.ipv6_cidr_block
  vpc_ipv6_cidr_length         = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

output "cluster_name" {
  value = "golden-shared.example.org"
}

output "master_autoscaling_group_ids" {
  value = [aws_autoscaling_group.cp-masters-golden-shared-example-org.id]
}

output "master_security_group_ids" {
  value = [aws_security_group.masters-golden-shared-example-org.id]
}

output "masters_role_arn" {
  value = aws_iam_role.masters-golden-shared-example-org.arn
}

output "masters_role_name" {
  value = aws_iam_role.masters-golden-shared-example-org.name
}

output "node_autoscaling_group_ids" {
  value = [aws_autoscaling_group.nodes-golden-shared-example-org.id]
}

output "node_security_group_ids" {
  value = [aws_security_group.nodes-golden-shared-example-org.id]
}

output "node_subnet_ids" {
  value = ["subnet-0abc"]
}

output "nodes_role_arn" {
  value = aws_iam_role.nodes-golden-shared-example-org.arn
}

output "nodes_role_name" {
  value = aws_iam_role.nodes-golden-shared-example-org.name
}

output "region" {
  value = "eu-west-9"
}

output "subnet_eu-west-9a_id" {
  value = "subnet-0abc"
}

output "subnet_ids" {
  value = ["subnet-0abc"]
}

output "vpc_cidr_block" {
  value = data.aws_vpc.golden-shared-example-org.cidr_block
}

output "vpc_id" {
  value = "vpc-0feedface"
}

output "vpc_ipv6_cidr_block" {
  value = data.aws_vpc.golden-shared-example-org.ipv6_cidr_block
}

output "vpc_ipv6_cidr_length" {
  value = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

provider "aws" {
  region = "eu-west-9"
}

provider "aws" {
  alias  = "files"
  region = "eu-west-9"
}

resource "aws_autoscaling_group" "cp-masters-golden-shared-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.cp-masters-golden-shared-example-org.id
    version = aws_launch_template.cp-masters-golden-shared-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "cp.masters.golden-shared.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-shared.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "cp.masters.golden-shared.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/control-plane"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "k8s.io/role/master"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "cp"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-shared.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  vpc_zone_identifier = ["subnet-0abc"]
}

resource "aws_autoscaling_group" "nodes-golden-shared-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.nodes-golden-shared-example-org.id
    version = aws_launch_template.nodes-golden-shared-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 2
  metrics_granularity   = "1Minute"
  min_size              = 2
  name                  = "nodes.golden-shared.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-shared.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "nodes.golden-shared.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/node"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "nodes"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-shared.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  vpc_zone_identifier = ["subnet-0abc"]
}

resource "aws_autoscaling_lifecycle_hook" "cp-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.cp-masters-golden-shared-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "cp-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "nodes-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.nodes-golden-shared-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "nodes-NTHLifecycleHook"
}

resource "aws_cloudwatch_event_rule" "golden-shared-example-org-ASGLifecycle" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared.example.org-ASGLifecycle_event_pattern")
  name          = "golden-shared.example.org-ASGLifecycle"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "golden-shared.example.org-ASGLifecycle"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared-example-org-InstanceScheduledChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared.example.org-InstanceScheduledChange_event_pattern")
  name          = "golden-shared.example.org-InstanceScheduledChange"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "golden-shared.example.org-InstanceScheduledChange"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared-example-org-InstanceStateChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared.example.org-InstanceStateChange_event_pattern")
  name          = "golden-shared.example.org-InstanceStateChange"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "golden-shared.example.org-InstanceStateChange"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-shared-example-org-SpotInterruption" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-shared.example.org-SpotInterruption_event_pattern")
  name          = "golden-shared.example.org-SpotInterruption"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "golden-shared.example.org-SpotInterruption"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_target" "golden-shared-example-org-ASGLifecycle-Target" {
  arn  = aws_sqs_queue.golden-shared-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared-example-org-ASGLifecycle.id
}

resource "aws_cloudwatch_event_target" "golden-shared-example-org-InstanceScheduledChange-Target" {
  arn  = aws_sqs_queue.golden-shared-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared-example-org-InstanceScheduledChange.id
}

resource "aws_cloudwatch_event_target" "golden-shared-example-org-InstanceStateChange-Target" {
  arn  = aws_sqs_queue.golden-shared-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared-example-org-InstanceStateChange.id
}

resource "aws_cloudwatch_event_target" "golden-shared-example-org-SpotInterruption-Target" {
  arn  = aws_sqs_queue.golden-shared-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-shared-example-org-SpotInterruption.id
}

resource "aws_ebs_volume" "a-etcd-events-golden-shared-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "a.etcd-events.golden-shared.example.org"
    "k8s.io/etcd/events"                              = "a/a"
    "k8s.io/role/control-plane"                       = "1"
    "k8s.io/role/master"                              = "1"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "a-etcd-main-golden-shared-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "a.etcd-main.golden-shared.example.org"
    "k8s.io/etcd/main"                                = "a/a"
    "k8s.io/role/control-plane"                       = "1"
    "k8s.io/role/master"                              = "1"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_iam_instance_profile" "masters-golden-shared-example-org" {
  name = "masters.golden-shared.example.org"
  role = aws_iam_role.masters-golden-shared-example-org.name
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "masters.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "nodes-golden-shared-example-org" {
  name = "nodes.golden-shared.example.org"
  role = aws_iam_role.nodes-golden-shared-example-org.name
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "nodes.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_iam_role" "masters-golden-shared-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_masters.golden-shared.example.org_policy")
  name               = "masters.golden-shared.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "masters.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_iam_role" "nodes-golden-shared-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_nodes.golden-shared.example.org_policy")
  name               = "nodes.golden-shared.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "nodes.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

resource "aws_iam_role_policy" "additional-masters-golden-shared-example-org" {
  name   = "additional.masters.golden-shared.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_additional.masters.golden-shared.example.org_policy")
  role   = aws_iam_role.masters-golden-shared-example-org.name
}

resource "aws_iam_role_policy" "masters-golden-shared-example-org" {
  name   = "masters.golden-shared.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_masters.golden-shared.example.org_policy")
  role   = aws_iam_role.masters-golden-shared-example-org.name
}

resource "aws_iam_role_policy" "nodes-golden-shared-example-org" {
  name   = "nodes.golden-shared.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_nodes.golden-shared.example.org_policy")
  role   = aws_iam_role.nodes-golden-shared-example-org.name
}

resource "aws_iam_role_policy_attachment" "node-policyoverride-2048659130" {
  policy_arn = "arn:aws:iam::111122223333:policy/node-extra"
  role       = aws_iam_role.nodes-golden-shared-example-org.name
}

resource "aws_launch_template" "cp-masters-golden-shared-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 64
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.masters-golden-shared-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = "ops-key"
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "cp.masters.golden-shared.example.org"
  network_interfaces {
    associate_public_ip_address = true
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.masters-golden-shared-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared.example.org"                                                       = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared.example.org"                                                       = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-shared.example.org"
      "Name"                                                                                                  = "cp.masters.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp"
      "kubernetes.io/cluster/golden-shared.example.org"                                                       = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-shared.example.org"
    "Name"                                                                                                  = "cp.masters.golden-shared.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "cp"
    "kubernetes.io/cluster/golden-shared.example.org"                                                       = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_cp.masters.golden-shared.example.org_user_data")
}

resource "aws_launch_template" "nodes-golden-shared-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 128
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.nodes-golden-shared-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = "ops-key"
  lifecycle {
    create_before_destroy = true
  }
  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "disabled"
    http_put_response_hop_limit = 1
    http_tokens                 = "required"
  }
  monitoring {
    enabled = false
  }
  name = "nodes.golden-shared.example.org"
  network_interfaces {
    associate_public_ip_address = true
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.nodes-golden-shared-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared.example.org"
      "Name"                                                                       = "nodes.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared.example.org"                            = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared.example.org"
      "Name"                                                                       = "nodes.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared.example.org"                            = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                          = "golden-shared.example.org"
      "Name"                                                                       = "nodes.golden-shared.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-shared.example.org"                            = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                          = "golden-shared.example.org"
    "Name"                                                                       = "nodes.golden-shared.example.org"
    "aws-node-termination-handler/managed"                                       = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
    "k8s.io/role/node"                                                           = "1"
    "kops.k8s.io/instancegroup"                                                  = "nodes"
    "kubernetes.io/cluster/golden-shared.example.org"                            = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_nodes.golden-shared.example.org_user_data")
}

resource "aws_s3_object" "cluster-completed-spec" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_cluster-completed.spec_content")
  key                    = "golden-shared.example.org/cluster-completed.spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-events" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-events_content")
  key                    = "golden-shared.example.org/backups/etcd/events/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-main" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-main_content")
  key                    = "golden-shared.example.org/backups/etcd/main/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-aws-cloud-controller-addons-k8s-io-k8s-1-18" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-aws-cloud-controller.addons.k8s.io-k8s-1.18_content")
  key                    = "golden-shared.example.org/addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-aws-ebs-csi-driver-addons-k8s-io-k8s-1-17" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-aws-ebs-csi-driver.addons.k8s.io-k8s-1.17_content")
  key                    = "golden-shared.example.org/addons/aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-bootstrap" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-bootstrap_content")
  key                    = "golden-shared.example.org/addons/bootstrap-channel.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-coredns-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-coredns.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-shared.example.org/addons/coredns.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-dns-controller-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-dns-controller.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-shared.example.org/addons/dns-controller.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-kops-controller-addons-k8s-io-k8s-1-16" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-kops-controller.addons.k8s.io-k8s-1.16_content")
  key                    = "golden-shared.example.org/addons/kops-controller.addons.k8s.io/k8s-1.16.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-kubelet-api-rbac-addons-k8s-io-k8s-1-9" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-kubelet-api.rbac.addons.k8s.io-k8s-1.9_content")
  key                    = "golden-shared.example.org/addons/kubelet-api.rbac.addons.k8s.io/k8s-1.9.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-limit-range-addons-k8s-io" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-limit-range.addons.k8s.io_content")
  key                    = "golden-shared.example.org/addons/limit-range.addons.k8s.io/v1.5.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-networking-kindnet-k8s-1-32" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-networking.kindnet-k8s-1.32_content")
  key                    = "golden-shared.example.org/addons/networking.kindnet/k8s-1.32.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-node-termination-handler-aws-k8s-1-11" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-node-termination-handler.aws-k8s-1.11_content")
  key                    = "golden-shared.example.org/addons/node-termination-handler.aws/k8s-1.11.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-shared-example-org-addons-storage-aws-addons-k8s-io-v1-15-0" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-shared.example.org-addons-storage-aws.addons.k8s.io-v1.15.0_content")
  key                    = "golden-shared.example.org/addons/storage-aws.addons.k8s.io/v1.15.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "kops-version-txt" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_kops-version.txt_content")
  key                    = "golden-shared.example.org/kops-version.txt"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-channels-kops-channels" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-channels-kops-channels_content")
  key                    = "golden-shared.example.org/manifests/channels/kops-channels.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-cp_content")
  key                    = "golden-shared.example.org/manifests/etcd/events-cp.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-cp_content")
  key                    = "golden-shared.example.org/manifests/etcd/main-cp.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-static-kube-apiserver-healthcheck" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
  key                    = "golden-shared.example.org/manifests/static/kube-apiserver-healthcheck.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-cp" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-cp_content")
  key                    = "golden-shared.example.org/igconfig/control-plane/cp/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-nodes" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-nodes_content")
  key                    = "golden-shared.example.org/igconfig/node/nodes/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_security_group" "masters-golden-shared-example-org" {
  description = "Security group for masters"
  name        = "masters.golden-shared.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "masters.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_security_group" "nodes-golden-shared-example-org" {
  description = "Security group for nodes"
  name        = "nodes.golden-shared.example.org"
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "nodes.golden-shared.example.org"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
  vpc_id = "vpc-0feedface"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-22to22-masters-golden-shared-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-22to22-nodes-golden-shared-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-443to443-masters-golden-shared-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 443
  protocol          = "tcp"
  security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port           = 443
  type              = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-shared-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-shared-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-shared-example-org-ingress-all-0to0-masters-golden-shared-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.masters-golden-shared-example-org.id
  source_security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-shared-example-org-ingress-all-0to0-nodes-golden-shared-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-shared-example-org.id
  source_security_group_id = aws_security_group.masters-golden-shared-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-ingress-all-0to0-nodes-golden-shared-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-shared-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-ingress-tcp-1to2379-masters-golden-shared-example-org" {
  from_port                = 1
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port                  = 2379
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-ingress-tcp-2382to4000-masters-golden-shared-example-org" {
  from_port                = 2382
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port                  = 4000
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-ingress-tcp-4003to65535-masters-golden-shared-example-org" {
  from_port                = 4003
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-shared-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-shared-example-org-ingress-udp-1to65535-masters-golden-shared-example-org" {
  from_port                = 1
  protocol                 = "udp"
  security_group_id        = aws_security_group.masters-golden-shared-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-shared-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_sqs_queue" "golden-shared-example-org-nth" {
  message_retention_seconds = 300
  name                      = "golden-shared-example-org-nth"
  policy                    = file("${path.module}/data/aws_sqs_queue_golden-shared-example-org-nth_policy")
  tags = {
    "KubernetesCluster"                               = "golden-shared.example.org"
    "Name"                                            = "golden-shared-example-org-nth"
    "kubernetes.io/cluster/golden-shared.example.org" = "owned"
  }
}

terraform {
  required_version = ">= 0.15.0"
  required_providers {
    aws = {
      "configuration_aliases" = [aws.files]
      "source"                = "hashicorp/aws"
      "version"               = ">= 5.0.0"
    }
  }
}
