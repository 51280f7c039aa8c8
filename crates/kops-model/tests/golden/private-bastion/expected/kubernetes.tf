locals {
  bastion_autoscaling_group_ids     = [aws_autoscaling_group.bastions-golden-private-example-org.id]
  bastion_security_group_ids        = [aws_security_group.bastion-golden-private-example-org.id]
  cluster_name                      = "golden-private.example.org"
  master_autoscaling_group_ids      = [aws_autoscaling_group.cp-a-masters-golden-private-example-org.id, aws_autoscaling_group.cp-b-masters-golden-private-example-org.id, aws_autoscaling_group.cp-c-masters-golden-private-example-org.id]
  master_security_group_ids         = [aws_security_group.masters-golden-private-example-org.id]
  masters_role_arn                  = aws_iam_role.masters-golden-private-example-org.arn
  masters_role_name                 = aws_iam_role.masters-golden-private-example-org.name
  node_autoscaling_group_ids        = [aws_autoscaling_group.nodes-golden-private-example-org.id]
  node_security_group_ids           = [aws_security_group.nodes-golden-private-example-org.id]
  node_subnet_ids                   = [aws_subnet.eu-west-9a-golden-private-example-org.id, aws_subnet.eu-west-9b-golden-private-example-org.id]
  nodes_role_arn                    = aws_iam_role.nodes-golden-private-example-org.arn
  nodes_role_name                   = aws_iam_role.nodes-golden-private-example-org.name
  region                            = "eu-west-9"
  route_table_private-eu-west-9a_id = aws_route_table.private-eu-west-9a-golden-private-example-org.id
  route_table_private-eu-west-9b_id = aws_route_table.private-eu-west-9b-golden-private-example-org.id
  route_table_public_id             = aws_route_table.golden-private-example-org.id
  subnet_eu-west-9a_id              = aws_subnet.eu-west-9a-golden-private-example-org.id
  subnet_eu-west-9b_id              = aws_subnet.eu-west-9b-golden-private-example-org.id
  subnet_utility-eu-west-9a_id      = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
  subnet_utility-eu-west-9b_id      = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
  vpc_cidr_block                    = aws_vpc.golden-private-example-org.cidr_block
  vpc_id                            = aws_vpc.golden-private-example-org.id
  vpc_ipv6_cidr_block               = aws_vpc.golden-private-example-org.ipv6_cidr_block
  vpc_ipv6_cidr_length              = local.vpc_ipv6_cidr_block == "" ? null : tonumber(regex(".*/(\\d+)", local.vpc_ipv6_cidr_block)[0])
}

output "bastion_autoscaling_group_ids" {
  value = [aws_autoscaling_group.bastions-golden-private-example-org.id]
}

output "bastion_security_group_ids" {
  value = [aws_security_group.bastion-golden-private-example-org.id]
}

output "cluster_name" {
  value = "golden-private.example.org"
}

output "master_autoscaling_group_ids" {
  value = [aws_autoscaling_group.cp-a-masters-golden-private-example-org.id, aws_autoscaling_group.cp-b-masters-golden-private-example-org.id, aws_autoscaling_group.cp-c-masters-golden-private-example-org.id]
}

output "master_security_group_ids" {
  value = [aws_security_group.masters-golden-private-example-org.id]
}

output "masters_role_arn" {
  value = aws_iam_role.masters-golden-private-example-org.arn
}

output "masters_role_name" {
  value = aws_iam_role.masters-golden-private-example-org.name
}

output "node_autoscaling_group_ids" {
  value = [aws_autoscaling_group.nodes-golden-private-example-org.id]
}

output "node_security_group_ids" {
  value = [aws_security_group.nodes-golden-private-example-org.id]
}

output "node_subnet_ids" {
  value = [aws_subnet.eu-west-9a-golden-private-example-org.id, aws_subnet.eu-west-9b-golden-private-example-org.id]
}

output "nodes_role_arn" {
  value = aws_iam_role.nodes-golden-private-example-org.arn
}

output "nodes_role_name" {
  value = aws_iam_role.nodes-golden-private-example-org.name
}

output "region" {
  value = "eu-west-9"
}

output "route_table_private-eu-west-9a_id" {
  value = aws_route_table.private-eu-west-9a-golden-private-example-org.id
}

output "route_table_private-eu-west-9b_id" {
  value = aws_route_table.private-eu-west-9b-golden-private-example-org.id
}

output "route_table_public_id" {
  value = aws_route_table.golden-private-example-org.id
}

output "subnet_eu-west-9a_id" {
  value = aws_subnet.eu-west-9a-golden-private-example-org.id
}

output "subnet_eu-west-9b_id" {
  value = aws_subnet.eu-west-9b-golden-private-example-org.id
}

output "subnet_utility-eu-west-9a_id" {
  value = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
}

output "subnet_utility-eu-west-9b_id" {
  value = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
}

output "vpc_cidr_block" {
  value = aws_vpc.golden-private-example-org.cidr_block
}

output "vpc_id" {
  value = aws_vpc.golden-private-example-org.id
}

output "vpc_ipv6_cidr_block" {
  value = aws_vpc.golden-private-example-org.ipv6_cidr_block
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

resource "aws_autoscaling_group" "bastions-golden-private-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.bastions-golden-private-example-org.id
    version = aws_launch_template.bastions-golden-private-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "bastions.golden-private.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-private.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "bastions.golden-private.example.org"
  }
  tag {
    key                 = "aws-node-termination-handler/managed"
    propagate_at_launch = true
    value               = ""
  }
  tag {
    key                 = "k8s.io/role/bastion"
    propagate_at_launch = true
    value               = "1"
  }
  tag {
    key                 = "kops.k8s.io/instancegroup"
    propagate_at_launch = true
    value               = "bastions"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-private.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  target_group_arns   = [aws_lb_target_group.bastion-golden-private-ex-aq5v8l.id]
  vpc_zone_identifier = [aws_subnet.utility-eu-west-9a-golden-private-example-org.id]
}

resource "aws_autoscaling_group" "cp-a-masters-golden-private-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.cp-a-masters-golden-private-example-org.id
    version = aws_launch_template.cp-a-masters-golden-private-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "cp-a.masters.golden-private.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-private.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "cp-a.masters.golden-private.example.org"
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
    value               = "cp-a"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-private.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  target_group_arns   = [aws_lb_target_group.tcp-golden-private-exampl-qvqgfo.id]
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-private-example-org.id]
}

resource "aws_autoscaling_group" "cp-b-masters-golden-private-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.cp-b-masters-golden-private-example-org.id
    version = aws_launch_template.cp-b-masters-golden-private-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "cp-b.masters.golden-private.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-private.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "cp-b.masters.golden-private.example.org"
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
    value               = "cp-b"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-private.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  target_group_arns   = [aws_lb_target_group.tcp-golden-private-exampl-qvqgfo.id]
  vpc_zone_identifier = [aws_subnet.eu-west-9b-golden-private-example-org.id]
}

resource "aws_autoscaling_group" "cp-c-masters-golden-private-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.cp-c-masters-golden-private-example-org.id
    version = aws_launch_template.cp-c-masters-golden-private-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 1
  metrics_granularity   = "1Minute"
  min_size              = 1
  name                  = "cp-c.masters.golden-private.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-private.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "cp-c.masters.golden-private.example.org"
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
    value               = "cp-c"
  }
  tag {
    key                 = "kubernetes.io/cluster/golden-private.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  target_group_arns   = [aws_lb_target_group.tcp-golden-private-exampl-qvqgfo.id]
  vpc_zone_identifier = [aws_subnet.eu-west-9b-golden-private-example-org.id]
}

resource "aws_autoscaling_group" "nodes-golden-private-example-org" {
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupMaxSize", "GroupMinSize", "GroupPendingInstances", "GroupStandbyInstances", "GroupTerminatingInstances", "GroupTotalInstances"]
  launch_template {
    id      = aws_launch_template.nodes-golden-private-example-org.id
    version = aws_launch_template.nodes-golden-private-example-org.latest_version
  }
  max_instance_lifetime = 0
  max_size              = 4
  metrics_granularity   = "1Minute"
  min_size              = 2
  name                  = "nodes.golden-private.example.org"
  protect_from_scale_in = false
  tag {
    key                 = "KubernetesCluster"
    propagate_at_launch = true
    value               = "golden-private.example.org"
  }
  tag {
    key                 = "Name"
    propagate_at_launch = true
    value               = "nodes.golden-private.example.org"
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
    key                 = "kubernetes.io/cluster/golden-private.example.org"
    propagate_at_launch = true
    value               = "owned"
  }
  vpc_zone_identifier = [aws_subnet.eu-west-9a-golden-private-example-org.id, aws_subnet.eu-west-9b-golden-private-example-org.id]
}

resource "aws_autoscaling_lifecycle_hook" "bastions-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.bastions-golden-private-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "bastions-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "cp-a-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.cp-a-masters-golden-private-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "cp-a-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "cp-b-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.cp-b-masters-golden-private-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "cp-b-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "cp-c-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.cp-c-masters-golden-private-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "cp-c-NTHLifecycleHook"
}

resource "aws_autoscaling_lifecycle_hook" "nodes-NTHLifecycleHook" {
  autoscaling_group_name = aws_autoscaling_group.nodes-golden-private-example-org.id
  default_result         = "CONTINUE"
  heartbeat_timeout      = 300
  lifecycle_transition   = "autoscaling:EC2_INSTANCE_TERMINATING"
  name                   = "nodes-NTHLifecycleHook"
}

resource "aws_cloudwatch_event_rule" "golden-private-example-org-ASGLifecycle" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-private.example.org-ASGLifecycle_event_pattern")
  name          = "golden-private.example.org-ASGLifecycle"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org-ASGLifecycle"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-private-example-org-InstanceScheduledChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-private.example.org-InstanceScheduledChange_event_pattern")
  name          = "golden-private.example.org-InstanceScheduledChange"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org-InstanceScheduledChange"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-private-example-org-InstanceStateChange" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-private.example.org-InstanceStateChange_event_pattern")
  name          = "golden-private.example.org-InstanceStateChange"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org-InstanceStateChange"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_rule" "golden-private-example-org-SpotInterruption" {
  event_pattern = file("${path.module}/data/aws_cloudwatch_event_rule_golden-private.example.org-SpotInterruption_event_pattern")
  name          = "golden-private.example.org-SpotInterruption"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org-SpotInterruption"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_cloudwatch_event_target" "golden-private-example-org-ASGLifecycle-Target" {
  arn  = aws_sqs_queue.golden-private-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-private-example-org-ASGLifecycle.id
}

resource "aws_cloudwatch_event_target" "golden-private-example-org-InstanceScheduledChange-Target" {
  arn  = aws_sqs_queue.golden-private-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-private-example-org-InstanceScheduledChange.id
}

resource "aws_cloudwatch_event_target" "golden-private-example-org-InstanceStateChange-Target" {
  arn  = aws_sqs_queue.golden-private-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-private-example-org-InstanceStateChange.id
}

resource "aws_cloudwatch_event_target" "golden-private-example-org-SpotInterruption-Target" {
  arn  = aws_sqs_queue.golden-private-example-org-nth.arn
  rule = aws_cloudwatch_event_rule.golden-private-example-org-SpotInterruption.id
}

resource "aws_ebs_volume" "a-etcd-events-golden-private-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "a.etcd-events.golden-private.example.org"
    "k8s.io/etcd/events"                               = "a/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "a-etcd-main-golden-private-example-org" {
  availability_zone = "eu-west-9a"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "a.etcd-main.golden-private.example.org"
    "k8s.io/etcd/main"                                 = "a/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "b-etcd-events-golden-private-example-org" {
  availability_zone = "eu-west-9b"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "b.etcd-events.golden-private.example.org"
    "k8s.io/etcd/events"                               = "b/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "b-etcd-main-golden-private-example-org" {
  availability_zone = "eu-west-9b"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "b.etcd-main.golden-private.example.org"
    "k8s.io/etcd/main"                                 = "b/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "c-etcd-events-golden-private-example-org" {
  availability_zone = "eu-west-9b"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "c.etcd-events.golden-private.example.org"
    "k8s.io/etcd/events"                               = "c/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_ebs_volume" "c-etcd-main-golden-private-example-org" {
  availability_zone = "eu-west-9b"
  encrypted         = false
  iops              = 3000
  size              = 20
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "c.etcd-main.golden-private.example.org"
    "k8s.io/etcd/main"                                 = "c/a,b,c"
    "k8s.io/role/control-plane"                        = "1"
    "k8s.io/role/master"                               = "1"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  throughput = 125
  type       = "gp3"
}

resource "aws_eip" "eu-west-9a-golden-private-example-org" {
  domain = "vpc"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9a.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_eip" "eu-west-9b-golden-private-example-org" {
  domain = "vpc"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9b.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "bastions-golden-private-example-org" {
  name = "bastions.golden-private.example.org"
  role = aws_iam_role.bastions-golden-private-example-org.name
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastions.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "masters-golden-private-example-org" {
  name = "masters.golden-private.example.org"
  role = aws_iam_role.masters-golden-private-example-org.name
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "masters.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_instance_profile" "nodes-golden-private-example-org" {
  name = "nodes.golden-private.example.org"
  role = aws_iam_role.nodes-golden-private-example-org.name
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "nodes.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_role" "bastions-golden-private-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_bastions.golden-private.example.org_policy")
  name               = "bastions.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastions.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_role" "masters-golden-private-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_masters.golden-private.example.org_policy")
  name               = "masters.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "masters.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_role" "nodes-golden-private-example-org" {
  assume_role_policy = file("${path.module}/data/aws_iam_role_nodes.golden-private.example.org_policy")
  name               = "nodes.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "nodes.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_iam_role_policy" "masters-golden-private-example-org" {
  name   = "masters.golden-private.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_masters.golden-private.example.org_policy")
  role   = aws_iam_role.masters-golden-private-example-org.name
}

resource "aws_iam_role_policy" "nodes-golden-private-example-org" {
  name   = "nodes.golden-private.example.org"
  policy = file("${path.module}/data/aws_iam_role_policy_nodes.golden-private.example.org_policy")
  role   = aws_iam_role.nodes-golden-private-example-org.name
}

resource "aws_internet_gateway" "golden-private-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_key_pair" "kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492" {
  key_name   = "kubernetes.golden-private.example.org-9c:ff:2e:9f:f5:23:8a:f6:b2:fb:a7:ae:8a:da:44:92"
  public_key = file("${path.module}/data/aws_key_pair_kubernetes.golden-private.example.org-9cff2e9ff5238af6b2fba7ae8ada4492_public_key")
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_launch_template" "bastions-golden-private-example-org" {
  block_device_mappings {
    device_name = "/dev/sda1"
    ebs {
      delete_on_termination = true
      encrypted             = true
      iops                  = 3000
      throughput            = 125
      volume_size           = 32
      volume_type           = "gp3"
    }
  }
  iam_instance_profile {
    name = aws_iam_instance_profile.bastions-golden-private-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "t3.micro"
  key_name      = aws_key_pair.kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
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
  name = "bastions.golden-private.example.org"
  network_interfaces {
    associate_public_ip_address = true
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.bastion-golden-private-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                = "golden-private.example.org"
      "Name"                                             = "bastions.golden-private.example.org"
      "aws-node-termination-handler/managed"             = ""
      "k8s.io/role/bastion"                              = "1"
      "kops.k8s.io/instancegroup"                        = "bastions"
      "kubernetes.io/cluster/golden-private.example.org" = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                = "golden-private.example.org"
      "Name"                                             = "bastions.golden-private.example.org"
      "aws-node-termination-handler/managed"             = ""
      "k8s.io/role/bastion"                              = "1"
      "kops.k8s.io/instancegroup"                        = "bastions"
      "kubernetes.io/cluster/golden-private.example.org" = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                = "golden-private.example.org"
      "Name"                                             = "bastions.golden-private.example.org"
      "aws-node-termination-handler/managed"             = ""
      "k8s.io/role/bastion"                              = "1"
      "kops.k8s.io/instancegroup"                        = "bastions"
      "kubernetes.io/cluster/golden-private.example.org" = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastions.golden-private.example.org"
    "aws-node-termination-handler/managed"             = ""
    "k8s.io/role/bastion"                              = "1"
    "kops.k8s.io/instancegroup"                        = "bastions"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_launch_template" "cp-a-masters-golden-private-example-org" {
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
    name = aws_iam_instance_profile.masters-golden-private-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = aws_key_pair.kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
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
  name = "cp-a.masters.golden-private.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.masters-golden-private-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-a.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-a"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-a.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-a"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-a.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-a"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-private.example.org"
    "Name"                                                                                                  = "cp-a.masters.golden-private.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "cp-a"
    "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_cp-a.masters.golden-private.example.org_user_data")
}

resource "aws_launch_template" "cp-b-masters-golden-private-example-org" {
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
    name = aws_iam_instance_profile.masters-golden-private-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = aws_key_pair.kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
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
  name = "cp-b.masters.golden-private.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.masters-golden-private-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-b.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-b"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-b.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-b"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-b.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-b"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-private.example.org"
    "Name"                                                                                                  = "cp-b.masters.golden-private.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "cp-b"
    "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_cp-b.masters.golden-private.example.org_user_data")
}

resource "aws_launch_template" "cp-c-masters-golden-private-example-org" {
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
    name = aws_iam_instance_profile.masters-golden-private-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = aws_key_pair.kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
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
  name = "cp-c.masters.golden-private.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.masters-golden-private-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-c.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-c"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-c.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-c"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                                                     = "golden-private.example.org"
      "Name"                                                                                                  = "cp-c.masters.golden-private.example.org"
      "aws-node-termination-handler/managed"                                                                  = ""
      "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
      "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
      "k8s.io/role/control-plane"                                                                             = "1"
      "k8s.io/role/master"                                                                                    = "1"
      "kops.k8s.io/instancegroup"                                                                             = "cp-c"
      "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                                                     = "golden-private.example.org"
    "Name"                                                                                                  = "cp-c.masters.golden-private.example.org"
    "aws-node-termination-handler/managed"                                                                  = ""
    "k8s.io/cluster-autoscaler/node-template/label/kops.k8s.io/kops-controller-pki"                         = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/control-plane"                   = ""
    "k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/exclude-from-external-load-balancers" = ""
    "k8s.io/role/control-plane"                                                                             = "1"
    "k8s.io/role/master"                                                                                    = "1"
    "kops.k8s.io/instancegroup"                                                                             = "cp-c"
    "kubernetes.io/cluster/golden-private.example.org"                                                      = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_cp-c.masters.golden-private.example.org_user_data")
}

resource "aws_launch_template" "nodes-golden-private-example-org" {
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
    name = aws_iam_instance_profile.nodes-golden-private-example-org.id
  }
  image_id      = "ami-0000aaaa"
  instance_type = "m5.large"
  key_name      = aws_key_pair.kubernetes-golden-private-example-org-9cff2e9ff5238af6b2fba7ae8ada4492.id
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
  name = "nodes.golden-private.example.org"
  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    ipv6_address_count          = 0
    security_groups             = [aws_security_group.nodes-golden-private-example-org.id]
  }
  tag_specifications {
    resource_type = "instance"
    tags = {
      "KubernetesCluster"                                                          = "golden-private.example.org"
      "Name"                                                                       = "nodes.golden-private.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-private.example.org"                           = "owned"
    }
  }
  tag_specifications {
    resource_type = "volume"
    tags = {
      "KubernetesCluster"                                                          = "golden-private.example.org"
      "Name"                                                                       = "nodes.golden-private.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-private.example.org"                           = "owned"
    }
  }
  tag_specifications {
    resource_type = "network-interface"
    tags = {
      "KubernetesCluster"                                                          = "golden-private.example.org"
      "Name"                                                                       = "nodes.golden-private.example.org"
      "aws-node-termination-handler/managed"                                       = ""
      "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
      "k8s.io/role/node"                                                           = "1"
      "kops.k8s.io/instancegroup"                                                  = "nodes"
      "kubernetes.io/cluster/golden-private.example.org"                           = "owned"
    }
  }
  tags = {
    "KubernetesCluster"                                                          = "golden-private.example.org"
    "Name"                                                                       = "nodes.golden-private.example.org"
    "aws-node-termination-handler/managed"                                       = ""
    "k8s.io/cluster-autoscaler/node-template/label/node-role.kubernetes.io/node" = ""
    "k8s.io/role/node"                                                           = "1"
    "kops.k8s.io/instancegroup"                                                  = "nodes"
    "kubernetes.io/cluster/golden-private.example.org"                           = "owned"
  }
  user_data = filebase64("${path.module}/data/aws_launch_template_nodes.golden-private.example.org_user_data")
}

resource "aws_lb" "api-golden-private-example-org" {
  enable_cross_zone_load_balancing = false
  internal                         = false
  load_balancer_type               = "network"
  name                             = "api-golden-private-exampl-44g0tv"
  security_groups                  = [aws_security_group.api-elb-golden-private-example-org.id]
  subnet_mapping {
    subnet_id = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
  }
  subnet_mapping {
    subnet_id = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
  }
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "api.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_lb" "bastion-golden-private-example-org" {
  enable_cross_zone_load_balancing = false
  internal                         = false
  load_balancer_type               = "network"
  name                             = "bastion-golden-private-ex-aq5v8l"
  security_groups                  = [aws_security_group.bastion-elb-golden-private-example-org.id]
  subnet_mapping {
    subnet_id = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
  }
  subnet_mapping {
    subnet_id = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
  }
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastion.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_lb_listener" "api-golden-private-example-org-443" {
  default_action {
    target_group_arn = aws_lb_target_group.tcp-golden-private-exampl-qvqgfo.id
    type             = "forward"
  }
  load_balancer_arn = aws_lb.api-golden-private-example-org.id
  port              = 443
  protocol          = "TCP"
}

resource "aws_lb_listener" "bastion-golden-private-example-org-22" {
  default_action {
    target_group_arn = aws_lb_target_group.bastion-golden-private-ex-aq5v8l.id
    type             = "forward"
  }
  load_balancer_arn = aws_lb.bastion-golden-private-example-org.id
  port              = 22
  protocol          = "TCP"
}

resource "aws_lb_target_group" "bastion-golden-private-ex-aq5v8l" {
  connection_termination = "true"
  deregistration_delay   = "30"
  health_check {
    healthy_threshold   = 2
    interval            = 10
    protocol            = "TCP"
    unhealthy_threshold = 2
  }
  name     = "bastion-golden-private-ex-aq5v8l"
  port     = 22
  protocol = "TCP"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastion-golden-private-ex-aq5v8l"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_lb_target_group" "tcp-golden-private-exampl-qvqgfo" {
  connection_termination = "true"
  deregistration_delay   = "30"
  health_check {
    healthy_threshold   = 2
    interval            = 10
    protocol            = "TCP"
    unhealthy_threshold = 2
  }
  name     = "tcp-golden-private-exampl-qvqgfo"
  port     = 443
  protocol = "TCP"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "tcp-golden-private-exampl-qvqgfo"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_nat_gateway" "eu-west-9a-golden-private-example-org" {
  allocation_id = aws_eip.eu-west-9a-golden-private-example-org.id
  subnet_id     = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9a.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_nat_gateway" "eu-west-9b-golden-private-example-org" {
  allocation_id = aws_eip.eu-west-9b-golden-private-example-org.id
  subnet_id     = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9b.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_route" "route-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.golden-private-example-org.id
  route_table_id         = aws_route_table.golden-private-example-org.id
}

resource "aws_route" "route-__--0" {
  destination_ipv6_cidr_block = "::/0"
  gateway_id                  = aws_internet_gateway.golden-private-example-org.id
  route_table_id              = aws_route_table.golden-private-example-org.id
}

resource "aws_route" "route-private-eu-west-9a-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.eu-west-9a-golden-private-example-org.id
  route_table_id         = aws_route_table.private-eu-west-9a-golden-private-example-org.id
}

resource "aws_route" "route-private-eu-west-9b-0-0-0-0--0" {
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.eu-west-9b-golden-private-example-org.id
  route_table_id         = aws_route_table.private-eu-west-9b-golden-private-example-org.id
}

resource "aws_route53_record" "api-golden-private-example-org" {
  alias {
    evaluate_target_health = false
    name                   = aws_lb.api-golden-private-example-org.dns_name
    zone_id                = aws_lb.api-golden-private-example-org.zone_id
  }
  name    = "api.golden-private.example.org"
  type    = "A"
  zone_id = "/hostedzone/ZGOLDEN"
}

resource "aws_route53_record" "api-golden-private-example-org-AAAA" {
  alias {
    evaluate_target_health = false
    name                   = aws_lb.api-golden-private-example-org.dns_name
    zone_id                = aws_lb.api-golden-private-example-org.zone_id
  }
  name    = "api.golden-private.example.org"
  type    = "AAAA"
  zone_id = "/hostedzone/ZGOLDEN"
}

resource "aws_route_table" "golden-private-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/kops/role"                          = "public"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_route_table" "private-eu-west-9a-golden-private-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "private-eu-west-9a.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/kops/role"                          = "private-eu-west-9a"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_route_table" "private-eu-west-9b-golden-private-example-org" {
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "private-eu-west-9b.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/kops/role"                          = "private-eu-west-9b"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_route_table_association" "private-eu-west-9a-golden-private-example-org" {
  route_table_id = aws_route_table.private-eu-west-9a-golden-private-example-org.id
  subnet_id      = aws_subnet.eu-west-9a-golden-private-example-org.id
}

resource "aws_route_table_association" "private-eu-west-9b-golden-private-example-org" {
  route_table_id = aws_route_table.private-eu-west-9b-golden-private-example-org.id
  subnet_id      = aws_subnet.eu-west-9b-golden-private-example-org.id
}

resource "aws_route_table_association" "utility-eu-west-9a-golden-private-example-org" {
  route_table_id = aws_route_table.golden-private-example-org.id
  subnet_id      = aws_subnet.utility-eu-west-9a-golden-private-example-org.id
}

resource "aws_route_table_association" "utility-eu-west-9b-golden-private-example-org" {
  route_table_id = aws_route_table.golden-private-example-org.id
  subnet_id      = aws_subnet.utility-eu-west-9b-golden-private-example-org.id
}

resource "aws_s3_object" "cluster-completed-spec" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_cluster-completed.spec_content")
  key                    = "golden-private.example.org/cluster-completed.spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-events" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-events_content")
  key                    = "golden-private.example.org/backups/etcd/events/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "etcd-cluster-spec-main" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_etcd-cluster-spec-main_content")
  key                    = "golden-private.example.org/backups/etcd/main/control/etcd-cluster-spec"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-aws-cloud-controller-addons-k8s-io-k8s-1-18" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-aws-cloud-controller.addons.k8s.io-k8s-1.18_content")
  key                    = "golden-private.example.org/addons/aws-cloud-controller.addons.k8s.io/k8s-1.18.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-aws-ebs-csi-driver-addons-k8s-io-k8s-1-17" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-aws-ebs-csi-driver.addons.k8s.io-k8s-1.17_content")
  key                    = "golden-private.example.org/addons/aws-ebs-csi-driver.addons.k8s.io/k8s-1.17.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-bootstrap" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-bootstrap_content")
  key                    = "golden-private.example.org/addons/bootstrap-channel.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-coredns-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-coredns.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-private.example.org/addons/coredns.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-dns-controller-addons-k8s-io-k8s-1-12" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-dns-controller.addons.k8s.io-k8s-1.12_content")
  key                    = "golden-private.example.org/addons/dns-controller.addons.k8s.io/k8s-1.12.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-kops-controller-addons-k8s-io-k8s-1-16" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-kops-controller.addons.k8s.io-k8s-1.16_content")
  key                    = "golden-private.example.org/addons/kops-controller.addons.k8s.io/k8s-1.16.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-kubelet-api-rbac-addons-k8s-io-k8s-1-9" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-kubelet-api.rbac.addons.k8s.io-k8s-1.9_content")
  key                    = "golden-private.example.org/addons/kubelet-api.rbac.addons.k8s.io/k8s-1.9.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-limit-range-addons-k8s-io" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-limit-range.addons.k8s.io_content")
  key                    = "golden-private.example.org/addons/limit-range.addons.k8s.io/v1.5.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-networking-cilium-io-k8s-1-16" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-networking.cilium.io-k8s-1.16_content")
  key                    = "golden-private.example.org/addons/networking.cilium.io/k8s-1.16-v1.15.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-node-termination-handler-aws-k8s-1-11" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-node-termination-handler.aws-k8s-1.11_content")
  key                    = "golden-private.example.org/addons/node-termination-handler.aws/k8s-1.11.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "golden-private-example-org-addons-storage-aws-addons-k8s-io-v1-15-0" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_golden-private.example.org-addons-storage-aws.addons.k8s.io-v1.15.0_content")
  key                    = "golden-private.example.org/addons/storage-aws.addons.k8s.io/v1.15.0.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "kops-version-txt" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_kops-version.txt_content")
  key                    = "golden-private.example.org/kops-version.txt"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-channels-kops-channels" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-channels-kops-channels_content")
  key                    = "golden-private.example.org/manifests/channels/kops-channels.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-cp-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-cp-a_content")
  key                    = "golden-private.example.org/manifests/etcd/events-cp-a.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-cp-b" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-cp-b_content")
  key                    = "golden-private.example.org/manifests/etcd/events-cp-b.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-events-cp-c" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-events-cp-c_content")
  key                    = "golden-private.example.org/manifests/etcd/events-cp-c.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-cp-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-cp-a_content")
  key                    = "golden-private.example.org/manifests/etcd/main-cp-a.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-cp-b" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-cp-b_content")
  key                    = "golden-private.example.org/manifests/etcd/main-cp-b.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-etcdmanager-main-cp-c" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-etcdmanager-main-cp-c_content")
  key                    = "golden-private.example.org/manifests/etcd/main-cp-c.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "manifests-static-kube-apiserver-healthcheck" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_manifests-static-kube-apiserver-healthcheck_content")
  key                    = "golden-private.example.org/manifests/static/kube-apiserver-healthcheck.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-cp-a" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-cp-a_content")
  key                    = "golden-private.example.org/igconfig/control-plane/cp-a/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-cp-b" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-cp-b_content")
  key                    = "golden-private.example.org/igconfig/control-plane/cp-b/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-cp-c" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-cp-c_content")
  key                    = "golden-private.example.org/igconfig/control-plane/cp-c/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_s3_object" "nodeupconfig-nodes" {
  bucket                 = "golden-state"
  content                = file("${path.module}/data/aws_s3_object_nodeupconfig-nodes_content")
  key                    = "golden-private.example.org/igconfig/node/nodes/nodeupconfig.yaml"
  provider               = aws.files
  server_side_encryption = "AES256"
}

resource "aws_security_group" "api-elb-golden-private-example-org" {
  description = "Security group for api ELB"
  name        = "api-elb.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "api-elb.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_security_group" "bastion-elb-golden-private-example-org" {
  description = "Security group for bastion ELB"
  name        = "bastion-elb.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastion-elb.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_security_group" "bastion-golden-private-example-org" {
  description = "Security group for bastion"
  name        = "bastion.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "bastion.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_security_group" "masters-golden-private-example-org" {
  description = "Security group for masters"
  name        = "masters.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "masters.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_security_group" "nodes-golden-private-example-org" {
  description = "Security group for nodes"
  name        = "nodes.golden-private.example.org"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "nodes.golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_security_group_rule" "from-0-0-0-0--0-ingress-tcp-443to443-api-elb-golden-private-example-org" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 443
  protocol          = "tcp"
  security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port           = 443
  type              = "ingress"
}

resource "aws_security_group_rule" "from-10-30-0-0--22-ingress-tcp-22to22-bastion-elb-golden-private-example-org" {
  cidr_blocks       = ["10.30.0.0/22"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-10-30-4-0--22-ingress-tcp-22to22-bastion-elb-golden-private-example-org" {
  cidr_blocks       = ["10.30.4.0/22"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-203-0-113-0--24-ingress-tcp-22to22-bastion-elb-golden-private-example-org" {
  cidr_blocks       = ["203.0.113.0/24"]
  from_port         = 22
  protocol          = "tcp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 22
  type              = "ingress"
}

resource "aws_security_group_rule" "from-api-elb-golden-private-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-api-elb-golden-private-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-bastion-elb-golden-private-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-bastion-elb-golden-private-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-bastion-elb-golden-private-example-org-ingress-icmp-3to4-bastion-golden-private-example-org" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.bastion-golden-private-example-org.id
  source_security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-bastion-elb-golden-private-example-org-ingress-tcp-22to22-bastion-golden-private-example-org" {
  from_port                = 22
  protocol                 = "tcp"
  security_group_id        = aws_security_group.bastion-golden-private-example-org.id
  source_security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port                  = 22
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-bastion-golden-private-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.bastion-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-bastion-golden-private-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.bastion-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-bastion-golden-private-example-org-ingress-icmp-3to4-bastion-elb-golden-private-example-org" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.bastion-elb-golden-private-example-org.id
  source_security_group_id = aws_security_group.bastion-golden-private-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-bastion-golden-private-example-org-ingress-tcp-22to22-masters-golden-private-example-org" {
  from_port                = 22
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.bastion-golden-private-example-org.id
  to_port                  = 22
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-bastion-golden-private-example-org-ingress-tcp-22to22-nodes-golden-private-example-org" {
  from_port                = 22
  protocol                 = "tcp"
  security_group_id        = aws_security_group.nodes-golden-private-example-org.id
  source_security_group_id = aws_security_group.bastion-golden-private-example-org.id
  to_port                  = 22
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-private-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-private-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.masters-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-masters-golden-private-example-org-ingress-all-0to0-masters-golden-private-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.masters-golden-private-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-masters-golden-private-example-org-ingress-all-0to0-nodes-golden-private-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-private-example-org.id
  source_security_group_id = aws_security_group.masters-golden-private-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-egress-all-0to0-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 0
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-egress-all-0to0-__--0" {
  from_port         = 0
  ipv6_cidr_blocks  = ["::/0"]
  protocol          = "-1"
  security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port           = 0
  type              = "egress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-ingress-all-0to0-nodes-golden-private-example-org" {
  from_port                = 0
  protocol                 = "-1"
  security_group_id        = aws_security_group.nodes-golden-private-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port                  = 0
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-ingress-tcp-1to2379-masters-golden-private-example-org" {
  from_port                = 1
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port                  = 2379
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-ingress-tcp-2382to4000-masters-golden-private-example-org" {
  from_port                = 2382
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port                  = 4000
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-ingress-tcp-4003to65535-masters-golden-private-example-org" {
  from_port                = 4003
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "from-nodes-golden-private-example-org-ingress-udp-1to65535-masters-golden-private-example-org" {
  from_port                = 1
  protocol                 = "udp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.nodes-golden-private-example-org.id
  to_port                  = 65535
  type                     = "ingress"
}

resource "aws_security_group_rule" "https-elb-to-master" {
  from_port                = 443
  protocol                 = "tcp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port                  = 443
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-api-elb-0-0-0-0--0" {
  cidr_blocks       = ["0.0.0.0/0"]
  from_port         = 3
  protocol          = "icmp"
  security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port           = 4
  type              = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-cp-to-elb" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.api-elb-golden-private-example-org.id
  source_security_group_id = aws_security_group.masters-golden-private-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-elb-to-cp" {
  from_port                = 3
  protocol                 = "icmp"
  security_group_id        = aws_security_group.masters-golden-private-example-org.id
  source_security_group_id = aws_security_group.api-elb-golden-private-example-org.id
  to_port                  = 4
  type                     = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-ssh-nlb-10-30-0-0--22" {
  cidr_blocks       = ["10.30.0.0/22"]
  from_port         = 3
  protocol          = "icmp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 4
  type              = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-ssh-nlb-10-30-4-0--22" {
  cidr_blocks       = ["10.30.4.0/22"]
  from_port         = 3
  protocol          = "icmp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 4
  type              = "ingress"
}

resource "aws_security_group_rule" "icmp-pmtu-ssh-nlb-203-0-113-0--24" {
  cidr_blocks       = ["203.0.113.0/24"]
  from_port         = 3
  protocol          = "icmp"
  security_group_id = aws_security_group.bastion-elb-golden-private-example-org.id
  to_port           = 4
  type              = "ingress"
}

resource "aws_sqs_queue" "golden-private-example-org-nth" {
  message_retention_seconds = 300
  name                      = "golden-private-example-org-nth"
  policy                    = file("${path.module}/data/aws_sqs_queue_golden-private-example-org-nth_policy")
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private-example-org-nth"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_subnet" "eu-west-9a-golden-private-example-org" {
  availability_zone                           = "eu-west-9a"
  cidr_block                                  = "10.30.32.0/19"
  enable_resource_name_dns_a_record_on_launch = true
  private_dns_hostname_type_on_launch         = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9a.golden-private.example.org"
    "SubnetType"                                       = "Private"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/role/internal-elb"                  = "1"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_subnet" "eu-west-9b-golden-private-example-org" {
  availability_zone                           = "eu-west-9b"
  cidr_block                                  = "10.30.64.0/19"
  enable_resource_name_dns_a_record_on_launch = true
  private_dns_hostname_type_on_launch         = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "eu-west-9b.golden-private.example.org"
    "SubnetType"                                       = "Private"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/role/internal-elb"                  = "1"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_subnet" "utility-eu-west-9a-golden-private-example-org" {
  availability_zone                           = "eu-west-9a"
  cidr_block                                  = "10.30.0.0/22"
  enable_resource_name_dns_a_record_on_launch = true
  private_dns_hostname_type_on_launch         = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "utility-eu-west-9a.golden-private.example.org"
    "SubnetType"                                       = "Utility"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/role/elb"                           = "1"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_subnet" "utility-eu-west-9b-golden-private-example-org" {
  availability_zone                           = "eu-west-9b"
  cidr_block                                  = "10.30.4.0/22"
  enable_resource_name_dns_a_record_on_launch = true
  private_dns_hostname_type_on_launch         = "resource-name"
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "utility-eu-west-9b.golden-private.example.org"
    "SubnetType"                                       = "Utility"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
    "kubernetes.io/role/elb"                           = "1"
  }
  vpc_id = aws_vpc.golden-private-example-org.id
}

resource "aws_vpc" "golden-private-example-org" {
  assign_generated_ipv6_cidr_block = true
  cidr_block                       = "10.30.0.0/16"
  enable_dns_hostnames             = true
  enable_dns_support               = true
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_vpc_dhcp_options" "golden-private-example-org" {
  domain_name         = "eu-west-9.compute.internal"
  domain_name_servers = ["AmazonProvidedDNS"]
  tags = {
    "KubernetesCluster"                                = "golden-private.example.org"
    "Name"                                             = "golden-private.example.org"
    "kubernetes.io/cluster/golden-private.example.org" = "owned"
  }
}

resource "aws_vpc_dhcp_options_association" "golden-private-example-org" {
  dhcp_options_id = aws_vpc_dhcp_options.golden-private-example-org.id
  vpc_id          = aws_vpc.golden-private-example-org.id
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
